import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { ADMIN, Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';
import { ALL_PERMISSIONS } from '../src/permissions/catalog.js';
import { ApiKeyEntity } from '../src/entities/api-key.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('sessions and keys over HTTP on %s', (dialect) => {
  async function start(options: Parameters<typeof startIdentityApp>[1] = {}) {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, options);
    return app;
  }

  it('setup works only while no user exists, signs the administrator in, and emits user_created and user_login', async () => {
    await start();
    const seen: string[] = [];
    app!.events.on('user_created', (e) => void seen.push(`created:${e.email}`));
    app!.events.on('user_login', (e) => void seen.push(`login:${e.email}:${e.userName}`));
    expect((await new Client(app!.url).call('GET', '/api/auth/status')).body).toEqual({ setupRequired: true, emailLoginEnabled: true });
    const admin = await setUpAdmin(app!);
    expect(admin.lastSetCookie).toMatch(/^holdfast_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Expires=/);
    expect(admin.lastSetCookie).not.toContain('Secure');
    const me = await admin.call('GET', '/api/auth/session');
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(ADMIN.email);
    expect(me.body.isSuperAdmin).toBe(true);
    expect(me.body.permissions).toEqual(ALL_PERMISSIONS);
    expect(me.body.csrfToken).toBe(admin.csrfToken);
    expect(seen).toEqual([`created:${ADMIN.email}`, `login:${ADMIN.email}:${ADMIN.name}`]);

    const again = await new Client(app!.url).call('POST', '/api/auth/setup', { json: { ...ADMIN, email: 'mallory@example.test' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already complete/);
  });

  it('sign-in checks the password, and a wrong password or unknown email get the same 401', async () => {
    await start();
    await setUpAdmin(app!);
    const wrongPassword = await new Client(app!.url).call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: 'nope nope nope' } });
    const unknownEmail = await new Client(app!.url).call('POST', '/api/auth/sign-in', { json: { email: 'ghost@example.test', password: 'nope nope nope' } });
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknownEmail.body);
    const client = new Client(app!.url);
    await client.signIn(ADMIN.email.toUpperCase(), ADMIN.password);
    expect((await client.call('GET', '/api/users/me')).body.email).toBe(ADMIN.email);
  });

  it('cookie-authenticated mutations need the X-CSRF-Token header; key-authenticated ones do not', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const missing = await admin.call('POST', '/api/groups', { json: { name: 'ops', permissions: [] }, withoutCsrf: true });
    // The http plugin's error mapper answers every 403 with `Forbidden`; the reason (CSRF) is in the server log.
    expect(missing.status).toBe(403);
    const wrong = await admin.call('POST', '/api/groups', { json: { name: 'ops', permissions: [] }, withoutCsrf: true, headers: { 'x-csrf-token': 'forged' } });
    expect(wrong.status).toBe(403);
    expect((await admin.call('GET', '/api/groups')).body.groups).toEqual([]);
    expect((await admin.call('POST', '/api/groups', { json: { name: 'ops', permissions: [] } })).status).toBe(201);

    const key = (await admin.call('POST', '/api/api-keys', { json: { name: 'script', permissions: ['groups:write'] } })).body.key as string;
    const byKey = await new Client(app!.url).call('POST', '/api/groups', { json: { name: 'dev', permissions: [] }, bearer: key });
    expect(byKey.status).toBe(201);
  });

  it('a request with both a session and a key is the session user; without the session it is the key', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const created = await admin.call('POST', '/api/users', { json: { name: 'Kim', email: 'kim@example.test', password: 'kims password' } });
    expect(created.status).toBe(201);
    const kim = new Client(app!.url);
    await kim.signIn('kim@example.test', 'kims password');
    const adminKey = (await admin.call('POST', '/api/api-keys', { json: { name: 'admin key', permissions: ['users:read'] } })).body.key as string;
    const both = await kim.call('GET', '/api/auth/session', { bearer: adminKey });
    expect(both.body.user.email).toBe('kim@example.test');
    expect(both.body.authMethod).toBe('session');
    const keyOnly = await new Client(app!.url).call('GET', '/api/auth/session', { bearer: adminKey });
    expect(keyOnly.body.authMethod).toBe('apikey');
    expect(keyOnly.body.user.email).toBe(ADMIN.email);
  });

  it("a super administrator's key is not a super administrator: it holds only its stored permissions", async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const reply = await admin.call('POST', '/api/api-keys', { json: { name: 'narrow', permissions: ['users:read'] } });
    expect(reply.status).toBe(201);
    const key = reply.body.key as string;
    const client = new Client(app!.url);
    const session = await client.call('GET', '/api/auth/session', { bearer: key });
    expect(session.body).toMatchObject({ isSuperAdmin: false, permissions: ['users:read'], authMethod: 'apikey', apiKeyId: reply.body.apiKey.id });
    expect((await client.call('GET', '/api/users', { bearer: key })).status).toBe(200);
    expect(await client.call('GET', '/api/groups', { bearer: key })).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
  });

  it('disabled, expired and unknown keys all get the same 401 body', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const make = async (name: string) => (await admin.call('POST', '/api/api-keys', { json: { name, permissions: ['users:read'] } })).body;
    const disabled = await make('disabled');
    expect((await admin.call('PATCH', `/api/api-keys/${disabled.apiKey.id}`, { json: { enabled: false } })).body.enabled).toBe(false);
    const expired = await make('expired');
    await db!.database.em().nativeUpdate(ApiKeyEntity, { id: expired.apiKey.id }, { expiresAt: new Date(Date.now() - 60_000) });
    const client = new Client(app!.url);
    const replies = await Promise.all(
      [disabled.key, expired.key, `svc_key_${'f'.repeat(40)}`, 'garbage'].map((bearer) => client.call('GET', '/api/users', { bearer })),
    );
    for (const reply of replies) expect(reply).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
  });

  it('DISABLE_EMAIL_LOGIN rejects sign-in and setup server-side with 403', async () => {
    await start({ env: { DISABLE_EMAIL_LOGIN: 'true' } });
    const client = new Client(app!.url);
    expect((await client.call('GET', '/api/auth/status')).body.emailLoginEnabled).toBe(false);
    const setup = await client.call('POST', '/api/auth/setup', { json: ADMIN });
    expect(setup.status).toBe(403);
    expect(await app!.services.users.count()).toBe(0);
    await app!.services.users.create({ ...ADMIN, isSuperAdmin: true });
    const signIn = await client.call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: ADMIN.password } });
    expect(signIn.status).toBe(403);
    expect(signIn.body.error).toMatch(/disabled on this server \(DISABLE_EMAIL_LOGIN\)/);
    expect(client.cookie).toBeUndefined();
  });

  it('lists own sessions, revokes one, and sign-out ends the current one', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const laptop = new Client(app!.url);
    await laptop.signIn(ADMIN.email, ADMIN.password);
    const listed = (await admin.call('GET', '/api/auth/sessions')).body.sessions as { id: string; isCurrent: boolean; ipAddress: string }[];
    expect(listed).toHaveLength(2);
    expect(listed.filter((s) => s.isCurrent)).toHaveLength(1);
    expect(listed[0]!.ipAddress).toBe('127.0.0.1');
    const other = listed.find((s) => !s.isCurrent)!;
    expect((await admin.call('DELETE', `/api/auth/sessions/${other.id}`)).status).toBe(204);
    expect((await laptop.call('GET', '/api/auth/session')).status).toBe(401);
    expect((await admin.call('DELETE', `/api/auth/sessions/${other.id}`)).status).toBe(404);
    const out = await admin.call('POST', '/api/auth/sign-out');
    expect(out.status).toBe(204);
    expect(admin.lastSetCookie).toMatch(/^holdfast_session=; .*Max-Age=0/);
    expect((await admin.call('GET', '/api/auth/session')).status).toBe(401);
  });
});

describe.each(DIALECTS)('session management needs a session on %s', (dialect) => {
  it('regression (issue 10.3): an API key, even one without permissions, can neither list nor revoke its owner\'s sessions', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const laptop = new Client(app.url);
    await laptop.signIn(ADMIN.email, ADMIN.password);
    const owner = (await app.services.users.list())[0]!;
    const { rawKey } = await app.services.apiKeys.create(owner.id, { name: 'no permissions', permissions: [] });
    const bearer = new Client(app.url);
    const listed = await bearer.call('GET', '/api/auth/sessions', { bearer: rawKey });
    expect(listed.status).toBe(403);
    expect(listed.body).toEqual({ error: 'Forbidden' });
    const sessions = (await admin.call('GET', '/api/auth/sessions')).body.sessions as { id: string; isCurrent: boolean }[];
    const other = sessions.find((s) => !s.isCurrent)!;
    const revoked = await bearer.call('DELETE', `/api/auth/sessions/${other.id}`, { bearer: rawKey });
    expect(revoked.status).toBe(403);
    expect(revoked.body).toEqual({ error: 'Forbidden' });
    // The session the key tried to end is still alive.
    expect((await laptop.call('GET', '/api/auth/session')).status).toBe(200);
    // A key holding every permission is refused too: the rule is the credential kind, not a permission.
    const { rawKey: fullKey } = await app.services.apiKeys.create(owner.id, { name: 'all', permissions: [...ALL_PERMISSIONS] });
    expect((await bearer.call('GET', '/api/auth/sessions', { bearer: fullKey })).status).toBe(403);
  });
});

describe.each(DIALECTS)('one body rule for identity routes on %s', (dialect) => {
  it('regression (issue 10.15): identity routes answer 400 naming an unknown key instead of dropping it, and refuse control characters in names', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const extra = await admin.call('POST', '/api/groups', { json: { name: 'ops', permissions: [], isSuperAdmin: true } });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatch(/body: Unrecognized key: "isSuperAdmin"/);
    const nested = await admin.call('POST', '/api/groups', { json: { name: 'ops', permissions: [], grants: [{ permission: 'jobs:read', resourceType: 'job', resourceIds: ['a'], all: true }] } });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatch(/body\.grants\[0\]: Unrecognized key: "all"/);
    const me = await admin.call('PUT', '/api/users/me', { json: { timezone: 'UTC', role: 'admin' } });
    expect(me.status).toBe(400);
    expect(me.body.error).toMatch(/Unrecognized key: "role"/);
    const signIn = await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: ADMIN.password, remember: true } });
    expect(signIn.status).toBe(400);
    const tab = await admin.call('POST', '/api/api-keys', { json: { name: 'ci\tkey', permissions: [] } });
    expect(tab.status).toBe(400);
    expect(tab.body.error).toBe('Invalid request: body.name: must not contain control characters');
    expect((await admin.call('GET', '/api/api-keys')).body.apiKeys).toEqual([]);
    expect((await admin.call('GET', '/api/groups')).body.groups).toEqual([]);
  });
});
