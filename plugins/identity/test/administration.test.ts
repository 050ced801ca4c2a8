// Issue 47.5 (administration): the audit log's actor and resource names, filters and CSV export; failed sign-ins
// audited without the password and within a bound; changing one's own password; disabling, deleting and resetting
// the password or second factor of a user, never removing the last enabled super administrator; API key expiry
// and permission presets.
import { afterEach, describe, expect, it } from 'vitest';
import { secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR } from '../src/audit/audit-trail.js';
import { AuditLogEntity } from '../src/entities/audit-log.js';
import { PERMISSION_PRESETS } from '../src/permissions/catalog.js';
import { csvCell } from '../src/routes/permission-and-audit-routes.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { ADMIN, Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

interface Entry {
  action: string;
  resource: string;
  actorName: string | null;
  actorType: string;
  resourceName: string | null;
  userId: string | null;
  details: string | null;
  createdAt: string;
}

async function start(dialect: (typeof DIALECTS)[number], options: Parameters<typeof startIdentityApp>[1] = {}) {
  db = await openDatabase(dialect);
  app = await startIdentityApp(db, options);
  const admin = await setUpAdmin(app);
  return { app, admin };
}

async function addUser(admin: Client, email: string, password = 'member password 1', extra: Record<string, unknown> = {}) {
  const reply = await admin.call('POST', '/api/users', { json: { name: email.split('@')[0], email, password, ...extra } });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body as { id: string; email: string };
}

async function entries(client: Client, query = ''): Promise<Entry[]> {
  const reply = await client.call('GET', `/api/audit?pageSize=200${query}`);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.entries;
}

async function csv(url: string, cookie: string, query = ''): Promise<{ status: number; type: string | null; disposition: string | null; text: string }> {
  const response = await fetch(`${url}/api/audit/export${query}`, { headers: { cookie } });
  return { status: response.status, type: response.headers.get('content-type'), disposition: response.headers.get('content-disposition'), text: await response.text() };
}

describe('CSV cells', () => {
  it('quote what needs quoting and defuse formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell(null)).toBe('');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    for (const dangerous of ['=HYPERLINK("x")', '+1', '-2+3', '@SUM(A1)', '\tx']) expect(csvCell(dangerous).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
  });
});

describe.each(DIALECTS)('administration on %s', (dialect) => {
  it('audit entries carry the actor (user or key name) and the resource name; filters by who, action and date range; 400 on bad filters', async () => {
    const { app, admin } = await start(dialect);
    const member = await addUser(admin, 'mel@example.test');
    const issued = (await admin.call('POST', '/api/api-keys', { json: { name: 'nightly-ci', permissions: ['audit:read', 'api-keys:write'] } })).body;
    // The key acts on its own: its entry names the key, not its owner.
    const byKey = await new Client(app.url).call('PATCH', `/api/api-keys/${issued.apiKey.id}`, { bearer: issued.key, json: { enabled: true } });
    expect(byKey.status).toBe(200);

    const all = await entries(admin);
    const created = all.find((e) => e.action === 'CREATE' && e.resource === 'user' && e.resourceName === member.email);
    expect(created).toMatchObject({ actorName: ADMIN.name, actorType: 'user' });
    const toggled = all.find((e) => e.action === 'api-key.toggle');
    expect(toggled).toMatchObject({ actorName: 'nightly-ci', actorType: 'api-key', resourceName: 'nightly-ci' });
    expect(all.find((e) => e.action === 'LOGIN')).toMatchObject({ actorName: ADMIN.name });

    // Who: part of the name, any case; action; both together.
    const byNightly = await entries(admin, '&actor=NIGHTLY');
    expect(byNightly.map((e) => e.action)).toEqual(['api-key.toggle']);
    const byAda = await entries(admin, `&actor=${encodeURIComponent('ada')}`);
    expect(byAda.length).toBeGreaterThan(2);
    expect(byAda.every((e) => e.actorName === ADMIN.name)).toBe(true);
    expect((await entries(admin, '&action=api-key.create')).map((e) => e.resourceName)).toEqual(['nightly-ci']);
    expect(await entries(admin, '&actor=ada&action=api-key.toggle')).toEqual([]);

    // Date range: everything so far is inside [first, now]; nothing before the first entry.
    const first = all[all.length - 1]!.createdAt;
    const now = new Date(Date.now() + 1000).toISOString();
    expect((await entries(admin, `&from=${encodeURIComponent(first)}&to=${encodeURIComponent(now)}`)).length).toBe(all.length);
    expect(await entries(admin, `&to=${encodeURIComponent(new Date(Date.parse(first) - 1000).toISOString())}`)).toEqual([]);

    for (const bad of ['from=yesterday', 'to=2026-13-40', `from=${encodeURIComponent(now)}&to=${encodeURIComponent(first)}`, 'pageSize=0', 'pageSize=1000', 'page=-1']) {
      const reply = await admin.call('GET', `/api/audit?${bad}`);
      expect(reply.status, bad).toBe(400);
      expect(reply.body.error).toEqual(expect.any(String));
    }
  });

  it('exports the filtered log as CSV with a header row, names, and formula-looking cells defused', async () => {
    const { app, admin } = await start(dialect);
    await addUser(admin, 'formula@example.test', 'member password 1', { name: '=HYPERLINK("http://evil.test","x")' });
    await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: '+danger@example.test', password: 'nope nope' } });

    const whole = await csv(app.url, admin.cookie!);
    expect(whole.status).toBe(200);
    expect(whole.type).toMatch(/^text\/csv/);
    expect(whole.disposition).toMatch(/^attachment; filename="holdfast-audit-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = whole.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('time,actor,actorType,userId,action,resource,resourceId,resourceName,ipAddress,userAgent,details');
    expect(lines.length).toBe(1 + (await entries(admin)).length);
    // The failed sign-in: the email tried is the actor and starts with '+', so it is written as text.
    const failed = lines.find((line) => line.includes(',login.failed,'));
    expect(failed).toContain(`,'+danger@example.test,anonymous,`);
    expect(failed).not.toContain('nope nope');
    // Every cell of every line is safe to open in a spreadsheet.
    for (const line of lines.slice(1)) {
      for (const cell of line.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((c) => c.replace(/,$/, '').replace(/^"|"$/g, ''))) {
        expect(/^[=+\-@]/.test(cell), `${cell} in ${line}`).toBe(false);
      }
    }

    const onlyLogins = await csv(app.url, admin.cookie!, '?action=LOGIN');
    expect(onlyLogins.text.trimEnd().split('\r\n')).toHaveLength(2);
    expect(onlyLogins.text).toContain(`,${ADMIN.name},user,`);
    expect((await csv(app.url, admin.cookie!, '?from=not-a-date')).status).toBe(400);
    expect((await csv(app.url, '')).status).toBe(401);
  });

  it('the CSV export pages through more entries than one batch', async () => {
    const { app, admin } = await start(dialect);
    const em = app.services.database.em().fork();
    const base = Date.now() - 60_000;
    // Same-millisecond neighbours included: the keyset paging must order by id within one timestamp.
    const rows = Array.from({ length: 1203 }, (_, i) => ({ id: `t-${String(i).padStart(6, '0')}`, userId: null, actorName: `bot ${i}`, action: 'TEST', resource: 'thing', resourceId: String(i), createdAt: new Date(base + Math.floor(i / 3)) }));
    await em.insertMany(AuditLogEntity, rows);
    const exported = await csv(app.url, admin.cookie!, '?action=TEST');
    const lines = exported.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(1204);
    expect(new Set(lines.slice(1).map((line) => line.split(',')[6])).size).toBe(1203);
  });

  it('a failed sign-in is audited with the email tried, the reason and the address, never the password; unknown emails are bounded', async () => {
    const { app, admin } = await start(dialect);
    const member = await addUser(admin, 'sam@example.test');
    const stranger = new Client(app.url);
    const wrong = await stranger.call('POST', '/api/auth/sign-in', { json: { email: 'Sam@Example.test', password: 'the secret tried 42' } });
    expect(wrong.status).toBe(401);
    const unknown = await stranger.call('POST', '/api/auth/sign-in', { json: { email: 'nobody@example.test', password: 'another secret 43' } });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);

    const failed = await entries(admin, '&action=login.failed');
    expect(failed).toHaveLength(2);
    const [forUnknown, forMember] = failed;
    expect(forMember).toMatchObject({ userId: member.id, actorName: 'sam@example.test', actorType: 'user', resource: 'session' });
    expect(JSON.parse(forMember!.details!)).toEqual({ email: 'sam@example.test', reason: 'wrong-password', knownUser: true });
    expect(forUnknown).toMatchObject({ userId: null, actorName: 'nobody@example.test', actorType: 'anonymous' });
    expect(JSON.parse(forUnknown!.details!)).toMatchObject({ reason: 'unknown-email', knownUser: false });
    const everything = await db!.dumpAllRows();
    expect(everything).not.toContain('the secret tried 42');
    expect(everything).not.toContain('another secret 43');
    // The member's own failures can be found by who.
    expect((await entries(admin, `&userId=${member.id}&action=login.failed`)).length).toBe(1);

    // Unknown emails share one hourly bound: the log cannot be grown without limit by made-up addresses.
    for (let i = 0; i < FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR + 5; i += 1) {
      expect((await stranger.call('POST', '/api/auth/sign-in', { json: { email: `flood${i}@example.test`, password: 'x' } })).status).toBe(401);
    }
    const unknownFailures = (await entries(admin, '&action=login.failed')).filter((e) => e.userId === null);
    expect(unknownFailures).toHaveLength(FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR);
    // A known user's failures still get through (their own bound is separate).
    await stranger.call('POST', '/api/auth/sign-in', { json: { email: 'sam@example.test', password: 'wrong again' } });
    expect((await entries(admin, `&userId=${member.id}&action=login.failed`)).length).toBe(2);
  }, 60_000);

  it('failed sign-ins are still rate limited per address (5 per minute by default)', async () => {
    const { app } = await start(dialect, { keepDefaultLimits: true });
    const stranger = new Client(app.url);
    const statuses: number[] = [];
    // setup used one auth point of this address.
    for (let i = 0; i < 6; i += 1) statuses.push((await stranger.call('POST', '/api/auth/sign-in', { json: { email: 'x@example.test', password: 'y' } })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    const rows = (await app.services.audit.list({ page: 1, pageSize: 50, action: 'login.failed' })).total;
    expect(rows).toBe(4);
  });

  it('changes own password with the current one: the old one stops working, other sessions end, the change is audited', async () => {
    const { app, admin } = await start(dialect);
    await addUser(admin, 'pat@example.test', 'first password 1');
    const pat = new Client(app.url);
    await pat.signIn('pat@example.test', 'first password 1');
    const patElsewhere = new Client(app.url);
    await patElsewhere.signIn('pat@example.test', 'first password 1');

    const wrong = await pat.call('PUT', '/api/users/me/password', { json: { currentPassword: 'not it at all', newPassword: 'second password 2' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('The current password is not correct');
    expect((await pat.call('PUT', '/api/users/me/password', { json: { currentPassword: 'first password 1', newPassword: 'short' } })).status).toBe(400);
    expect((await pat.call('PUT', '/api/users/me/password', { json: { currentPassword: 'first password 1', newPassword: 'first password 1' } })).status).toBe(400);
    expect((await pat.call('PUT', '/api/users/me/password', { json: { currentPassword: 'first password 1', newPassword: 'second password 2' } })).status).toBe(204);

    expect((await pat.call('GET', '/api/users/me')).status).toBe(200);
    expect((await patElsewhere.call('GET', '/api/users/me')).status).toBe(401);
    expect((await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: 'pat@example.test', password: 'first password 1' } })).status).toBe(401);
    await new Client(app.url).signIn('pat@example.test', 'second password 2');

    const change = (await entries(admin, '&action=user.password-change'))[0]!;
    expect(change).toMatchObject({ actorName: 'pat', resourceName: 'pat@example.test' });
    expect(JSON.parse(change.details!)).toEqual({ self: true, otherSessionsEnded: 1 });
    expect(await db!.dumpAllRows()).not.toContain('second password 2');

    // An API key cannot change its owner's password.
    const key = (await admin.call('POST', '/api/api-keys', { json: { name: 'k', permissions: ['users:read'] } })).body.key;
    const viaKey = await new Client(app.url).call('PUT', '/api/users/me/password', { bearer: key, json: { currentPassword: ADMIN.password, newPassword: 'key set this 1' } });
    expect(viaKey.status).toBe(403);
  });

  it('an administrator disables a user: sign-in refused, sessions ended, API keys stop working; enabling brings the keys back', async () => {
    const { app, admin } = await start(dialect);
    const group = (await admin.call('POST', '/api/groups', { json: { name: 'readers', permissions: ['jobs:read', 'api-keys:write', 'api-keys:read'] } })).body;
    const member = await addUser(admin, 'dee@example.test', 'member password 1', { groupId: group.id });
    const dee = new Client(app.url);
    await dee.signIn('dee@example.test', 'member password 1');
    const key = (await dee.call('POST', '/api/api-keys', { json: { name: 'dee script', permissions: ['jobs:read'] } })).body.key;
    expect((await new Client(app.url).call('GET', '/api/users/me', { bearer: key })).status).toBe(200);

    const disabled = await admin.call('PUT', `/api/users/${member.id}/enabled`, { json: { enabled: false } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled).toBe(true);
    expect((await dee.call('GET', '/api/users/me')).status).toBe(401);
    expect((await new Client(app.url).call('GET', '/api/users/me', { bearer: key })).status).toBe(401);
    const refused = await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: 'dee@example.test', password: 'member password 1' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/disabled/);
    // A wrong password for a disabled user says nothing about the account.
    expect((await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: 'dee@example.test', password: 'wrong one 12' } })).status).toBe(401);
    expect((await admin.call('GET', '/api/users')).body.users.find((u: { id: string }) => u.id === member.id).disabled).toBe(true);

    expect((await admin.call('PUT', `/api/users/${member.id}/enabled`, { json: { enabled: true } })).body.disabled).toBe(false);
    expect((await new Client(app.url).call('GET', '/api/users/me', { bearer: key })).status).toBe(200);
    await new Client(app.url).signIn('dee@example.test', 'member password 1');

    const actions = (await entries(admin, `&resource=user`)).filter((e) => e.resourceName === 'dee@example.test').map((e) => e.action);
    expect(actions.slice(0, 2)).toEqual(['user.enable', 'user.disable']);
    const disabledSignIn = (await entries(admin, '&action=login.failed')).find((e) => JSON.parse(e.details!).reason === 'disabled');
    expect(disabledSignIn).toMatchObject({ userId: member.id });
  });

  it('resets a password (given or generated once) and a second factor; both end or clear what they should and are audited', async () => {
    const { app, admin } = await start(dialect);
    const member = await addUser(admin, 'ray@example.test', 'member password 1');
    const ray = new Client(app.url);
    await ray.signIn('ray@example.test', 'member password 1');

    const given = await admin.call('POST', `/api/users/${member.id}/reset-password`, { json: { password: 'admin chose this 1' } });
    expect(given.status).toBe(200);
    expect(given.body.temporaryPassword).toBeUndefined();
    expect((await ray.call('GET', '/api/users/me')).status).toBe(401);
    await new Client(app.url).signIn('ray@example.test', 'admin chose this 1');

    const generated = await admin.call('POST', `/api/users/${member.id}/reset-password`, { json: {} });
    expect(generated.status).toBe(200);
    expect(generated.headers.get('cache-control')).toBe('no-store');
    expect(generated.body.temporaryPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    await new Client(app.url).signIn('ray@example.test', generated.body.temporaryPassword);
    expect((await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: 'ray@example.test', password: 'admin chose this 1' } })).status).toBe(401);
    const resets = await entries(admin, '&action=user.password-reset');
    expect(resets.map((e) => JSON.parse(e.details!).generated)).toEqual([true, false]);
    expect(await db!.dumpAllRows()).not.toContain(generated.body.temporaryPassword);

    // Second factor: a TOTP enrollment (confirmed) is removed; the next sign-in needs only the password.
    const rayNow = new Client(app.url);
    await rayNow.signIn('ray@example.test', generated.body.temporaryPassword);
    const enrollment = (await rayNow.call('POST', '/api/auth/two-factor/enroll', { json: {} })).body;
    const secret = secretOfUri(enrollment.otpauthUri);
    expect((await rayNow.call('POST', '/api/auth/two-factor/confirm', { json: { code: totpForStep(secret, stepAt()) } })).status).toBe(200);
    const secondStep = new Client(app.url);
    expect((await secondStep.call('POST', '/api/auth/sign-in', { json: { email: 'ray@example.test', password: generated.body.temporaryPassword } })).body.twoFactorRequired).toBe(true);
    // A wrong code at the second step is a failed sign-in too: audited with the reason, never the code.
    const wrongCode = totpForStep(secret, stepAt()) === '000000' ? '111111' : '000000';
    expect((await secondStep.call('POST', '/api/auth/two-factor/verify', { json: { code: wrongCode } })).status).toBe(401);
    const secondFailure = (await entries(admin, '&action=login.failed'))[0]!;
    expect(secondFailure).toMatchObject({ userId: member.id, actorName: 'ray@example.test' });
    expect(JSON.parse(secondFailure.details!)).toEqual({ email: 'ray@example.test', reason: 'wrong-second-factor', knownUser: true });

    const reset = await admin.call('POST', `/api/users/${member.id}/reset-second-factor`, { json: {} });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ removed: { totp: true, passkeys: 0 }, user: { twoFactorEnabled: false } });
    const plain = await new Client(app.url).call('POST', '/api/auth/sign-in', { json: { email: 'ray@example.test', password: generated.body.temporaryPassword } });
    expect(plain.status).toBe(200);
    expect(plain.body.user.email).toBe('ray@example.test');
    expect((await entries(admin, '&action=user.second-factor-reset'))[0]).toMatchObject({ actorName: ADMIN.name, resourceName: 'ray@example.test' });
    expect((await admin.call('POST', '/api/users/no-such-user/reset-second-factor', { json: {} })).status).toBe(404);
  });

  it('never leaves no enabled super administrator and never lets an administrator disable or delete themself (409 with a message)', async () => {
    const { app, admin } = await start(dialect);
    const me = (await admin.call('GET', '/api/users/me')).body;
    const selfDisable = await admin.call('PUT', `/api/users/${me.id}/enabled`, { json: { enabled: false } });
    expect(selfDisable.status).toBe(409);
    expect(selfDisable.body.error).toBe('You cannot disable your own account');
    expect((await admin.call('DELETE', `/api/users/${me.id}`)).status).toBe(409);
    const selfDemote = await admin.call('PUT', `/api/users/${me.id}`, { json: { isSuperAdmin: false } });
    expect(selfDemote.status).toBe(409);
    expect(selfDemote.body.error).toMatch(/last enabled super administrator/);

    // A second administrator who is disabled does not count.
    const other = await addUser(admin, 'bo@example.test', 'other admin pass 1', { isSuperAdmin: true });
    expect((await admin.call('PUT', `/api/users/${other.id}/enabled`, { json: { enabled: false } })).status).toBe(200);
    expect((await admin.call('PUT', `/api/users/${me.id}`, { json: { isSuperAdmin: false } })).status).toBe(409);
    expect((await admin.call('PUT', `/api/users/${other.id}/enabled`, { json: { enabled: true } })).status).toBe(200);
    // With another enabled one, demoting oneself is allowed; then bo cannot disable or delete the last one (bo).
    const bo = new Client(app.url);
    await bo.signIn('bo@example.test', 'other admin pass 1');
    expect((await admin.call('PUT', `/api/users/${me.id}`, { json: { isSuperAdmin: false } })).status).toBe(200);
    expect((await bo.call('PUT', `/api/users/${other.id}/enabled`, { json: { enabled: false } })).status).toBe(409);
    expect((await bo.call('DELETE', `/api/users/${other.id}`)).status).toBe(409);

    // users:write without super administrator rights cannot touch a super administrator.
    const group = (await bo.call('POST', '/api/groups', { json: { name: 'user admins', permissions: ['users:read', 'users:write'] } })).body;
    expect((await bo.call('PUT', `/api/users/${me.id}`, { json: { groupId: group.id } })).status).toBe(200);
    const ada = new Client(app.url);
    await ada.signIn(ADMIN.email, ADMIN.password);
    for (const [method, path, json] of [
      ['PUT', `/api/users/${other.id}/enabled`, { enabled: false }],
      ['POST', `/api/users/${other.id}/reset-password`, {}],
      ['POST', `/api/users/${other.id}/reset-second-factor`, {}],
    ] as const) {
      expect((await ada.call(method, path, { json })).status, path).toBe(403);
    }
    // ...but can act on a member.
    const member = await addUser(bo, 'kim@example.test');
    expect((await ada.call('PUT', `/api/users/${member.id}/enabled`, { json: { enabled: false } })).status).toBe(200);
    expect((await ada.call('DELETE', `/api/users/${member.id}`)).status).toBe(204);
    expect((await entries(bo, '&action=DELETE&resource=user'))[0]).toMatchObject({ actorName: ADMIN.name, resourceName: 'kim@example.test' });
  });

  it('API keys: expiry must be in the future, is shown in the list and ends the key; presets are offered by GET /api/permissions', async () => {
    const { app, admin } = await start(dialect);
    const past = await admin.call('POST', '/api/api-keys', { json: { name: 'old', permissions: ['jobs:read'], expiresAt: new Date(Date.now() - 60_000).toISOString() } });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatch(/future/);
    expect((await admin.call('POST', '/api/api-keys', { json: { name: 'bad', permissions: ['jobs:read'], expiresAt: 'tomorrow' } })).status).toBe(400);

    const expiresAt = new Date(Date.now() + 2_000).toISOString();
    const issued = await admin.call('POST', '/api/api-keys', { json: { name: 'short-lived', permissions: ['jobs:read'], expiresAt } });
    expect(issued.status).toBe(201);
    const listed = (await admin.call('GET', '/api/api-keys')).body.apiKeys.find((k: { name: string }) => k.name === 'short-lived');
    expect(Date.parse(listed.expiresAt)).toBe(Date.parse(expiresAt));
    expect((await new Client(app.url).call('GET', '/api/users/me', { bearer: issued.body.key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await new Client(app.url).call('GET', '/api/users/me', { bearer: issued.body.key })).status).toBe(401);

    const catalog = (await admin.call('GET', '/api/permissions')).body;
    expect(catalog.presets.map((p: { id: string }) => p.id)).toEqual(['read-only', 'operator', 'full']);
    const names = new Set(catalog.permissions.map((p: { name: string }) => p.name));
    for (const preset of catalog.presets) for (const permission of preset.permissions) expect(names.has(permission)).toBe(true);
    const readOnly = catalog.presets[0].permissions as string[];
    expect(readOnly.every((p) => p.endsWith(':read'))).toBe(true);
    for (const secret of ['credentials:read', 'vault:read', 'users:read', 'audit:read', 'api-keys:read']) expect(readOnly).not.toContain(secret);
    expect(catalog.presets[1].permissions).toEqual(expect.arrayContaining([...readOnly, 'jobs:execute', 'storage:restore']));
    expect(catalog.presets[2].permissions).toEqual([...names]);
    expect(PERMISSION_PRESETS).toHaveLength(3);
    // A preset is accepted as a key's permission set as it is.
    expect((await admin.call('POST', '/api/api-keys', { json: { name: 'operator key', permissions: catalog.presets[1].permissions } })).status).toBe(201);
  });
});
