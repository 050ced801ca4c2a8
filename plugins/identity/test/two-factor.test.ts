import { afterEach, describe, expect, it } from 'vitest';
import { awayFromStepBoundary, secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { TwoFactorEntity } from '../src/entities/second-factor.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { ADMIN, Client, setUpAdmin, startIdentityApp, type Reply, type RunningIdentityApp } from './support/http.js';
import { testSealer } from './support/test-sealer.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('two-factor TOTP with backup codes on %s', (dialect) => {
  const sealer = testSealer();
  /** Every response body seen, for the secret-leak scan at the end of a test. */
  let replies: Reply[] = [];

  async function start(options: Parameters<typeof startIdentityApp>[1] = {}) {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { sealer, ...options });
    replies = [];
    return app;
  }

  async function call(client: Client, method: string, path: string, json?: unknown): Promise<Reply> {
    const reply = await client.call(method, path, json === undefined ? {} : { json });
    replies.push(reply);
    return reply;
  }

  /** Enrolls the admin; the confirming code is the one of the previous step (the window allows it). */
  async function enroll(admin: Client) {
    const started = await call(admin, 'POST', '/api/auth/two-factor/enroll', {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const secret = secretOfUri(started.body.otpauthUri);
    await awayFromStepBoundary();
    const confirmed = await call(admin, 'POST', '/api/auth/two-factor/confirm', { code: totpForStep(secret, stepAt() - 1) });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    return { secret, uri: started.body.otpauthUri as string, manualKey: started.body.manualKey as string, backupCodes: confirmed.body.backupCodes as string[] };
  }

  /** The password step: answers the pending state and a client holding the pending cookie. */
  async function passwordStep() {
    const client = new Client(app!.url);
    const reply = await call(client, 'POST', '/api/auth/sign-in', { email: ADMIN.email, password: ADMIN.password });
    return { client, reply };
  }

  it('enrollment gives an otpauth URI and manual key, is inactive until a first code confirms it, and hands out ten backup codes', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const started = await call(admin, 'POST', '/api/auth/two-factor/enroll', {});
    expect(started.status).toBe(200);
    expect(started.body.otpauthUri).toMatch(/^otpauth:\/\/totp\/Holdfast:ada%40example\.test\?/);
    const uri = new URL(started.body.otpauthUri);
    expect(uri.searchParams.get('issuer')).toBe('Holdfast');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');
    const secret = secretOfUri(started.body.otpauthUri);
    expect(started.body.manualKey.replace(/ /g, '')).toBe(secret);
    expect((await call(admin, 'GET', '/api/auth/two-factor')).body).toEqual({ enabled: false, enrollmentPending: true, backupCodesRemaining: 0 });
    // Not active yet: the password alone still signs in.
    expect((await passwordStep()).reply.body.csrfToken).toEqual(expect.any(String));

    const wrong = await call(admin, 'POST', '/api/auth/two-factor/confirm', { code: '000000' === totpForStep(secret, stepAt()) ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/Invalid two-factor code/);
    await awayFromStepBoundary();
    const confirmed = await call(admin, 'POST', '/api/auth/two-factor/confirm', { code: totpForStep(secret, stepAt()) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.backupCodes).toHaveLength(10);
    expect(new Set(confirmed.body.backupCodes).size).toBe(10);
    expect(confirmed.headers.get('cache-control')).toBe('no-store');
    expect((await call(admin, 'GET', '/api/auth/two-factor')).body).toEqual({ enabled: true, enrollmentPending: false, backupCodesRemaining: 10 });
    expect((await call(admin, 'GET', '/api/users/me')).body.twoFactorEnabled).toBe(true);
    expect((await call(admin, 'POST', '/api/auth/two-factor/enroll', {})).status).toBe(409);
  });

  it('sign-in needs a second factor: codes of the independent generator pass within one step, a replay and codes two steps away do not', async () => {
    await start();
    const seen: string[] = [];
    app!.events.on('user_login', (e) => void seen.push(e.email));
    const admin = await setUpAdmin(app!);
    const { secret } = await enroll(admin);
    seen.length = 0;

    const { client, reply } = await passwordStep();
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ twoFactorRequired: true, methods: ['totp', 'backup-code'], expiresAt: expect.any(String) });
    expect(reply.headers.get('set-cookie')).toMatch(/^holdfast_2fa=[^;]+; Path=\/api\/auth; HttpOnly; SameSite=Strict; Max-Age=300/);
    expect(reply.body.csrfToken).toBeUndefined();
    expect((await call(client, 'GET', '/api/auth/session')).status).toBe(401);
    expect(seen).toEqual([]);

    await awayFromStepBoundary();
    const now = stepAt();
    for (const farStep of [now - 2, now + 2]) {
      const far = await call(client, 'POST', '/api/auth/two-factor/verify', { code: totpForStep(secret, farStep) });
      expect(far.status, `step ${farStep - now}`).toBe(401);
      expect(far.body.error).toBe('Unauthorized');
    }
    // The confirming code used step now-1; the next step's code is inside the window and later, so it passes.
    const accepted = await call(client, 'POST', '/api/auth/two-factor/verify', { code: totpForStep(secret, now + 1) });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.csrfToken).toEqual(expect.any(String));
    expect((await call(client, 'GET', '/api/auth/session')).body.user.email).toBe(ADMIN.email);
    expect(seen).toEqual([ADMIN.email]);

    // Replay: a second sign-in with the same code, and with an earlier one, is refused.
    const second = await passwordStep();
    const replay = await call(second.client, 'POST', '/api/auth/two-factor/verify', { code: totpForStep(secret, now + 1) });
    expect(replay.status).toBe(409);
    expect(replay.body.error).toMatch(/already used/);
    expect((await call(second.client, 'POST', '/api/auth/two-factor/verify', { code: totpForStep(secret, now) })).body.error).toMatch(/already used/);

    const entries = await app!.services.audit.list({ page: 1, pageSize: 50, action: 'LOGIN' });
    const details = entries.entries.map((entry) => JSON.parse(entry.details ?? '{}'));
    expect(details[0]).toEqual({ authMethod: 'password', secondFactor: 'totp' });
  });

  it('a backup code signs in once; the pending state is single-use and needed', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { backupCodes } = await enroll(admin);

    expect((await call(new Client(app!.url), 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[0] })).status).toBe(401);
    const first = await passwordStep();
    const used = await call(first.client, 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[0]!.toUpperCase() });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    // The same pending cookie cannot open a second session.
    const pendingCookie = first.reply.headers.get('set-cookie')!.split(';')[0]!;
    const reuse = await fetch(`${app!.url}/api/auth/two-factor/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: pendingCookie },
      body: JSON.stringify({ backupCode: backupCodes[1] }),
    });
    expect(reuse.status).toBe(401);

    const again = await passwordStep();
    const twice = await call(again.client, 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[0] });
    expect(twice.status).toBe(401);
    expect((await call(again.client, 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[1] })).status).toBe(200);
    expect((await call(admin, 'GET', '/api/auth/two-factor')).body.backupCodesRemaining).toBe(8);
    const both = await call(again.client, 'POST', '/api/auth/two-factor/verify', { code: '123456', backupCode: backupCodes[2] });
    expect(both.status).toBe(400);

    const logins = await app!.services.audit.list({ page: 1, pageSize: 50, action: 'LOGIN' });
    expect(JSON.parse(logins.entries[0]!.details!)).toEqual({ authMethod: 'password', secondFactor: 'backup-code' });
  });

  it('regenerating codes and disabling need re-authentication; old codes stop working; off means the password alone signs in', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { secret, backupCodes } = await enroll(admin);

    const noProof = await call(admin, 'POST', '/api/auth/two-factor/backup-codes', {});
    expect(noProof.status).toBe(400);
    const wrong = await call(admin, 'POST', '/api/auth/two-factor/backup-codes', { password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('The password is not correct');
    // Issue 45.4: the password alone does not make new second factors; the session has not proven one yet.
    const stale = await call(admin, 'POST', '/api/auth/two-factor/backup-codes', { password: ADMIN.password });
    expect(stale.status).toBe(403);
    expect(stale.body.details).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', action: 'second-factor.change' });
    expect((await call(admin, 'POST', '/api/auth/step-up', { backupCode: backupCodes[1] })).status).toBe(200);
    const regenerated = await call(admin, 'POST', '/api/auth/two-factor/backup-codes', { password: ADMIN.password });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.backupCodes).toHaveLength(10);
    expect(regenerated.body.backupCodes).not.toContain(backupCodes[0]);
    const pending = await passwordStep();
    expect((await call(pending.client, 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[0] })).status).toBe(401);

    expect((await call(admin, 'POST', '/api/auth/two-factor/disable', { code: '000001' })).status).toBe(403);
    await awayFromStepBoundary();
    const off = await call(admin, 'POST', '/api/auth/two-factor/disable', { code: totpForStep(secret, stepAt() + 1) });
    expect(off.status, JSON.stringify(off.body)).toBe(204);
    expect((await call(admin, 'GET', '/api/users/me')).body.twoFactorEnabled).toBe(false);
    expect((await passwordStep()).reply.body.csrfToken).toEqual(expect.any(String));
    const actions = (await app!.services.audit.list({ page: 1, pageSize: 50, resource: 'two-factor' })).entries.map((e) => e.action);
    expect(actions).toEqual(['two-factor.disable', 'two-factor.backup-codes', 'two-factor.enable', 'two-factor.enroll']);
  });

  it('repeated wrong codes are cut off by the per-user auth rate limit (429), even with the right code', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { secret } = await enroll(admin);
    app!.settings.set('authPoints', '5');
    const userId = (await call(admin, 'GET', '/api/users/me')).body.id as string;
    // enroll's confirmation took one point of the same bucket.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      statuses.push(await app!.services.twoFactor.verify(userId, { code: '000000' }).then(() => 200, (error: { status: number }) => error.status));
    }
    await awayFromStepBoundary();
    const right = await app!.services.twoFactor.verify(userId, { code: totpForStep(secret, stepAt() + 1) }).then(() => 200, (error: { status: number; message: string }) => `${error.status} ${error.message}`);
    expect(statuses.filter((status) => status !== 401)).toEqual([]);
    expect(right).toMatch(/^429 Too many two-factor attempts; try again in \d+ seconds$/);
  });

  it('stores the secret sealed and the backup codes only as sealed hashes; no response after enrollment carries either', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const { secret, backupCodes, uri, manualKey } = await enroll(admin);
    const enrollmentReplies = replies.splice(0);
    // After enrollment, every read route of the account.
    for (const path of ['/api/auth/two-factor', '/api/users/me', '/api/auth/session', '/api/auth/sessions', '/api/users', '/api/audit?pageSize=100']) {
      expect((await call(admin, 'GET', path)).status, path).toBe(200);
    }
    const pending = await passwordStep();
    await call(pending.client, 'POST', '/api/auth/two-factor/verify', { backupCode: backupCodes[0] });
    // The session just signed in with a second factor, so it may make new backup codes (issue 45.4).
    expect((await call(pending.client, 'POST', '/api/auth/two-factor/backup-codes', { password: ADMIN.password })).status).toBe(200);

    const userId = (await call(admin, 'GET', '/api/users/me')).body.id as string;
    const row = await db!.database.em().findOneOrFail(TwoFactorEntity, { userId });
    expect(row.secret.startsWith('t1:')).toBe(true);
    expect(sealer.open(row.secret)).toBe(secret);
    const storedHashes = JSON.parse(sealer.open(row.backupCodes)) as string[];
    expect(storedHashes).toHaveLength(10);
    const dump = await db!.dumpAllRows();
    for (const value of [secret, ...backupCodes, ...backupCodes.map((c) => c.replace('-', '')), ...storedHashes]) expect(dump).not.toContain(value);

    const later = replies.filter((reply) => !reply.body?.backupCodes).map((reply) => JSON.stringify(reply.body) + JSON.stringify([...reply.headers]));
    for (const text of later) {
      for (const value of [secret, manualKey, uri, row.secret, row.backupCodes, ...storedHashes, ...backupCodes]) expect(text).not.toContain(value);
    }
    expect(enrollmentReplies.length).toBeGreaterThan(0);
  });

  it('without a system-key sealer, enrollment answers 503 naming the missing key', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { sealer: undefined, withoutSealer: true });
    const admin = await setUpAdmin(app);
    const reply = await admin.call('POST', '/api/auth/two-factor/enroll', { json: {} });
    expect(reply.status).toBe(503);
    expect(reply.body.error).toMatch(/system encryption key/);
  });
});
