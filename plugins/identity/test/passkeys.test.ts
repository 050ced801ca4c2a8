import type { HttpError } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { PasskeyEntity } from '../src/entities/second-factor.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { ADMIN, Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('passkeys with a software authenticator on %s', (dialect) => {
  async function start(options: Parameters<typeof startIdentityApp>[1] = {}) {
    db ??= await openDatabase(dialect);
    app = await startIdentityApp(db, options);
    return app;
  }

  /** Registers a new software passkey for the signed-in client. */
  async function register(client: Client, name?: string, backedUp = true) {
    const authenticator = new SoftwareAuthenticator({ origin: app!.url, backedUp });
    const options = await client.call('POST', '/api/auth/passkeys/registration-options', { json: {} });
    expect(options.status, JSON.stringify(options.body)).toBe(200);
    const created = await client.call('POST', '/api/auth/passkeys', { json: { ...(name ? { name } : {}), response: authenticator.create(options.body) } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { authenticator, passkey: created.body };
  }

  /** Proves the passkey again in `client`'s session (issue 45.4: adding or removing a factor needs a fresh one). */
  async function stepUp(client: Client, authenticator: SoftwareAuthenticator) {
    const options = await client.call('POST', '/api/auth/step-up/passkey-options', { json: {} });
    const reply = await client.call('POST', '/api/auth/step-up', { json: { passkey: authenticator.get(options.body) } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  }

  /** A passwordless sign-in from a fresh browser. */
  async function passkeySignIn(authenticator: SoftwareAuthenticator, overrides: Parameters<SoftwareAuthenticator['get']>[1] = {}) {
    const client = new Client(app!.url);
    const options = await client.call('POST', '/api/auth/passkeys/sign-in/options', { json: {} });
    expect(options.status).toBe(200);
    const assertion = authenticator.get(options.body, overrides);
    const reply = await client.call('POST', '/api/auth/passkeys/sign-in', { json: { response: assertion } });
    return { client, reply, options: options.body, assertion };
  }

  it('registers a passkey (device type, backed-up flag, transports stored), lists, renames and deletes it', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const options = await admin.call('POST', '/api/auth/passkeys/registration-options', { json: {} });
    expect(options.body.rp).toEqual({ name: 'Holdfast', id: '127.0.0.1' });
    expect(options.body.user.name).toBe(ADMIN.email);
    expect(options.body.authenticatorSelection).toMatchObject({ residentKey: 'required' });
    const { authenticator, passkey } = await register(admin, 'Laptop');
    expect(passkey).toMatchObject({ name: 'Laptop', credentialId: authenticator.id, deviceType: 'multiDevice', backedUp: true, transports: ['internal', 'hybrid'] });
    expect(passkey.aaguid).toMatch(/^[0-9a-f-]{36}$/);
    // A second passkey is a new second factor: refused until the first one is proven again (issue 45.4).
    const unproven = await admin.call('POST', '/api/auth/passkeys', { json: { response: new SoftwareAuthenticator({ origin: app!.url }).create((await admin.call('POST', '/api/auth/passkeys/registration-options', { json: {} })).body) } });
    expect(unproven.body.details).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', action: 'second-factor.change' });
    await stepUp(admin, authenticator);
    const { passkey: single } = await register(admin, undefined, false);
    expect(single).toMatchObject({ name: null, deviceType: 'singleDevice', backedUp: false });

    // The options of the next registration exclude both credentials.
    const next = await admin.call('POST', '/api/auth/passkeys/registration-options', { json: {} });
    expect(next.body.excludeCredentials.map((c: { id: string }) => c.id).sort()).toEqual([passkey.credentialId, single.credentialId].sort());

    const list = await admin.call('GET', '/api/auth/passkeys');
    expect(list.body.passkeys.map((p: { id: string }) => p.id)).toEqual([passkey.id, single.id]);
    expect(JSON.stringify(list.body)).not.toContain('publicKey');
    expect((await admin.call('PATCH', `/api/auth/passkeys/${passkey.id}`, { json: { name: 'Work laptop' } })).body.name).toBe('Work laptop');
    expect((await admin.call('PATCH', `/api/auth/passkeys/${passkey.id}`, { json: { name: '' } })).status).toBe(400);
    expect((await admin.call('DELETE', `/api/auth/passkeys/${single.id}`)).status).toBe(204);
    expect((await admin.call('DELETE', `/api/auth/passkeys/${single.id}`)).status).toBe(404);
    expect((await admin.call('GET', '/api/auth/passkeys')).body.passkeys).toHaveLength(1);

    // The same authenticator again under the first (still unused) options: already registered. Sent twice, the
    // second answer finds its challenge used up.
    const again = authenticator.create(options.body);
    const duplicate = await admin.call('POST', '/api/auth/passkeys', { json: { response: again } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toBe('This passkey is already registered');
    const reuse = await admin.call('POST', '/api/auth/passkeys', { json: { response: again } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toMatch(/challenge is unknown, used or expired/);
    const actions = (await app!.services.audit.list({ page: 1, pageSize: 20, resource: 'passkey' })).entries.map((e) => e.action);
    expect(actions).toEqual(['passkey.delete', 'passkey.rename', 'passkey.create', 'passkey.create']);
  });

  it('signs in without a password (discoverable credential): session, LOGIN audit, user_login event, counter stored', async () => {
    await start();
    const seen: string[] = [];
    app!.events.on('user_login', (e) => void seen.push(e.email));
    const admin = await setUpAdmin(app!);
    const { authenticator, passkey } = await register(admin);
    seen.length = 0;

    const { client, reply, options } = await passkeySignIn(authenticator);
    expect(options.allowCredentials ?? []).toEqual([]);
    expect(options.userVerification).toBe('required');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.user.email).toBe(ADMIN.email);
    expect((await client.call('GET', '/api/auth/session')).status).toBe(200);
    expect(seen).toEqual([ADMIN.email]);
    const login = (await app!.services.audit.list({ page: 1, pageSize: 5, action: 'LOGIN' })).entries[0]!;
    expect(JSON.parse(login.details!)).toEqual({ authMethod: 'passkey', passkeyId: passkey.id });
    const stored = await db!.database.em().findOneOrFail(PasskeyEntity, { id: passkey.id });
    expect(stored.counter).toBe(1);
  });

  it('rejects a counter that goes back (cloned authenticator), a replayed assertion, a wrong origin and a missing user verification', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { authenticator } = await register(admin);
    expect((await passkeySignIn(authenticator)).reply.status).toBe(200);
    expect((await passkeySignIn(authenticator)).reply.status).toBe(200);

    // Replay of an accepted assertion: the challenge is gone.
    const first = await passkeySignIn(authenticator);
    const replay = await new Client(app!.url).call('POST', '/api/auth/passkeys/sign-in', { json: { response: first.assertion } });
    expect(replay.status).toBe(401);

    // Counter regression: the service names the reason (HTTP 401 bodies never explain themselves).
    authenticator.counter = 1;
    const rp = { rpID: '127.0.0.1', origin: app!.url, name: 'Holdfast' };
    const options = await app!.services.passkeys.authenticationOptions(rp, null);
    const cloned = await app!.services.passkeys.authenticate(rp, authenticator.get(options) as never).then(
      () => 'accepted',
      (error: HttpError) => `${error.status} ${error.message}`,
    );
    expect(cloned).toMatch(/^401 Passkey sign-in was not accepted: .*counter/i);
    authenticator.counter = 0;
    expect((await passkeySignIn(authenticator)).reply.status).toBe(401);
    const stored = await db!.database.em().findOneOrFail(PasskeyEntity, { credentialId: authenticator.id });
    expect(stored.counter).toBe(3);

    authenticator.counter = 10;
    expect((await passkeySignIn(authenticator, { origin: 'https://phishing.example' })).reply.status).toBe(401);
    expect((await passkeySignIn(authenticator, { userVerified: false })).reply.status).toBe(401);
    expect((await passkeySignIn(authenticator, { rpId: 'example.com' })).reply.status).toBe(401);
    expect((await passkeySignIn(authenticator)).reply.status).toBe(200);
    const garbage = await new Client(app!.url).call('POST', '/api/auth/passkeys/sign-in', { json: { response: { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'not json', authenticatorData: '', signature: '' } } } });
    expect(garbage.status).toBe(400);
  });

  it('audits a refused passkey sign-in as login.failed with its reason and the account when known, never the assertion (issue 47.5)', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { authenticator } = await register(admin);
    const failures = async () => (await app!.services.audit.list({ page: 1, pageSize: 20, action: 'login.failed' })).entries;
    expect(await failures()).toHaveLength(0);

    // A registered passkey answering for the wrong origin: the signature check fails, the account is known.
    const phished = await passkeySignIn(authenticator, { origin: 'https://phishing.example' });
    expect(phished.reply.status).toBe(401);
    const [refused] = await failures();
    expect(await failures()).toHaveLength(1);
    expect(refused).toMatchObject({ resource: 'session', userId: expect.any(String), actorName: ADMIN.email, resourceName: ADMIN.email });
    expect(JSON.parse(refused!.details!)).toEqual({
      email: ADMIN.email,
      reason: 'passkey-verification-failed',
      knownUser: true,
      authMethod: 'passkey',
      credentialId: authenticator.id,
    });
    for (const secret of [phished.assertion.response.signature, phished.assertion.response.clientDataJSON, phished.assertion.response.authenticatorData]) {
      expect(JSON.stringify(refused)).not.toContain(secret);
    }

    // A passkey this server never registered: no account to name.
    const stranger = new SoftwareAuthenticator({ origin: app!.url });
    expect((await passkeySignIn(stranger)).reply.status).toBe(401);
    const entries = await failures();
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ userId: null, actorName: null });
    expect(JSON.parse(entries[0]!.details!)).toEqual({ email: '', reason: 'passkey-unknown', knownUser: false, authMethod: 'passkey', credentialId: stranger.id });

    // A good sign-in writes no failure.
    expect((await passkeySignIn(authenticator)).reply.status).toBe(200);
    expect(await failures()).toHaveLength(2);
  });

  it('as a second factor: the password step asks for the passkey, only that account\'s passkeys are offered, presence suffices', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    expect((await admin.call('PUT', '/api/auth/passkeys/two-factor', { json: { enabled: true } })).status).toBe(409);
    const { authenticator, passkey } = await register(admin);
    expect((await admin.call('PUT', '/api/auth/passkeys/two-factor', { json: { enabled: true } })).body).toEqual({ passkeyTwoFactor: true });

    const client = new Client(app!.url);
    const step = await client.call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: ADMIN.password } });
    expect(step.body).toEqual({ twoFactorRequired: true, methods: ['passkey'], expiresAt: expect.any(String) });
    const options = await client.call('POST', '/api/auth/passkeys/sign-in/options', { json: {} });
    expect(options.body.allowCredentials.map((c: { id: string }) => c.id)).toEqual([passkey.credentialId]);
    const reply = await client.call('POST', '/api/auth/passkeys/sign-in', { json: { response: authenticator.get(options.body, { userVerified: false }) } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await client.call('GET', '/api/auth/session')).body.user.email).toBe(ADMIN.email);
    const login = (await app!.services.audit.list({ page: 1, pageSize: 5, action: 'LOGIN' })).entries[0]!;
    expect(JSON.parse(login.details!)).toEqual({ authMethod: 'password', secondFactor: 'passkey', passkeyId: passkey.id });

    // Deleting the last passkey turns the requirement off, so the account is not locked out.
    // Removing it needs a fresh second factor: the session that just signed in with it has one (issue 45.4).
    expect((await admin.call('DELETE', `/api/auth/passkeys/${passkey.id}`)).status).toBe(403);
    expect((await client.call('DELETE', `/api/auth/passkeys/${passkey.id}`)).status).toBe(204);
    expect((await admin.call('GET', '/api/users/me')).body.passkeyTwoFactor).toBe(false);
    const plain = await new Client(app!.url).call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: ADMIN.password } });
    expect(plain.body.csrfToken).toEqual(expect.any(String));
  });

  it('DISABLE_EMAIL_LOGIN rejects every password endpoint server-side while passkeys keep signing in', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { authenticator } = await register(admin);
    await app!.close();
    // The same database served with password sign-in switched off.
    await start({ env: { DISABLE_EMAIL_LOGIN: 'true' } });
    // The restarted server listens on another port, so the page's origin moved with it.
    authenticator.options.origin = app!.url;
    const anonymous = new Client(app!.url);
    expect((await anonymous.call('GET', '/api/auth/status')).body.emailLoginEnabled).toBe(false);
    const signIn = await anonymous.call('POST', '/api/auth/sign-in', { json: { email: ADMIN.email, password: ADMIN.password } });
    expect(signIn.status).toBe(403);
    expect(signIn.body.error).toMatch(/DISABLE_EMAIL_LOGIN/);
    expect((await anonymous.call('POST', '/api/auth/setup', { json: { email: 'x@example.test', password: 'long enough pass' } })).status).toBe(403);

    const { client, reply } = await passkeySignIn(authenticator);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/api/users', { name: 'Bob', email: 'bob@example.test', password: 'bob password 1' }],
      ['PUT', `/api/users/${reply.body.user.id}`, { password: 'a new password' }],
    ] as const) {
      const answer = await client.call(method, path, { json: body });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/DISABLE_EMAIL_LOGIN/);
    }
    // Without a password the user routes still work.
    expect((await client.call('POST', '/api/users', { json: { name: 'Bob', email: 'bob@example.test' } })).status).toBe(201);
    await client.call('POST', '/api/auth/two-factor/enroll', { json: {} });
    const reauth = await client.call('POST', '/api/auth/two-factor/disable', { json: { password: ADMIN.password } });
    expect(reauth.status).toBe(403);
    expect(reauth.body.error).toMatch(/DISABLE_EMAIL_LOGIN/);
  });
});
