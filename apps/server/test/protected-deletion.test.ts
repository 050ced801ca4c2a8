// Issue 45 scope 4 / acceptance 3 through the assembled server: deleting a backup, a destination, an encryption
// profile, unlocking a backup and changing a job's retention need a fresh second factor from a user who has one;
// API keys need the `allowBackupDeletion` option; every such action is audited and raises `protected_action`.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS, type HoldfastEvents } from '@holdfast/kernel';
import { awayFromStepBoundary, secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Answer, type Caller, type FullServer } from './support/full-server.js';

/** Short enough for the test to wait it out. */
const WINDOW_SECONDS = 12;

describe.each(['sqlite', 'postgresql'] as const)('protected deletion on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  let dir: string;
  const events: Array<HoldfastEvents['protected_action']> = [];

  beforeAll(async () => {
    server = await startFullServer(dialect, { env: { HOLDFAST_STEP_UP_WINDOW_SECONDS: String(WINDOW_SECONDS) } });
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    server.handle.container.resolve(TOKENS.EventBus).on('protected_action', (event) => void events.push(event));
    dir = await mkdtemp(join(tmpdir(), 'holdfast-protected-'));
    for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(dir, `${name}.sql.gz`), `backup ${name}`);
    await writeFile(join(dir, 'd.sql.gz.meta.json'), JSON.stringify({ locked: true }));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const expectStatus = (answer: Answer, status: number) => expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  const create = async (path: string, body: unknown, caller: Caller = admin) => {
    const answer = await server.call('POST', path, caller, body);
    expectStatus(answer, 201);
    return answer.body;
  };
  const auditOf = async (action: string) => {
    const answer = await server.call('GET', `/api/audit?action=${encodeURIComponent(action)}&pageSize=200`, admin);
    expectStatus(answer, 200);
    const entries = answer.body.entries as Array<{ action: string; resource: string; resourceId: string | null; details: string | null }>;
    // The filter may match by prefix; keep the exact action, with its details parsed.
    return entries.filter((entry) => entry.action === action).map((entry) => ({ ...entry, details: entry.details ? JSON.parse(entry.details) : null }));
  };
  const deleteFile = (storageId: string, file: string, caller: Caller) => server.call('DELETE', `/api/storage/${storageId}/files`, caller, { file });

  it('needs a fresh second factor from a user who has one, a key option from API keys, and audits and announces every protected action', async () => {
    const local = await create('/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: dir } });

    // A user without a second factor deletes as before; the action is still audited and announced (proof "none").
    expectStatus(await deleteFile(local.id, 'a.sql.gz', admin), 200);
    expect(existsSync(join(dir, 'a.sql.gz'))).toBe(false);
    expect((await auditOf('protected-action')).find((entry) => entry.details?.file === 'a.sql.gz')?.details).toMatchObject({ action: 'backup.delete', proof: 'none', via: 'session' });

    // Enroll TOTP; from now on the user has a second factor.
    const started = await server.call('POST', '/api/auth/two-factor/enroll', admin, {});
    expectStatus(started, 200);
    const secret = secretOfUri(started.body.otpauthUri);
    await awayFromStepBoundary();
    const enrolledStep = stepAt();
    expectStatus(await server.call('POST', '/api/auth/two-factor/confirm', admin, { code: totpForStep(secret, enrolledStep) }), 200);

    // No fresh second factor: 403 saying what is needed, with a stable code; nothing deleted.
    const refused = await deleteFile(local.id, 'b.sql.gz', admin);
    expectStatus(refused, 403);
    expect(refused.body.error).toMatch(/fresh second factor.*authenticator code.*POST \/api\/auth\/step-up/);
    expect(refused.body.details).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', action: 'backup.delete', stepUp: '/api/auth/step-up' });
    expect(existsSync(join(dir, 'b.sql.gz'))).toBe(true);
    expect((await auditOf('protected-action.refused')).some((entry) => entry.details?.file === 'b.sql.gz' && entry.details?.reason === 'second-factor-not-fresh')).toBe(true);

    // A wrong step-up code: refused, nothing changes.
    const wrongCode = totpForStep(secret, enrolledStep + 1) === '000000' ? '111111' : '000000';
    const badStepUp = await server.call('POST', '/api/auth/step-up', admin, { code: wrongCode });
    expectStatus(badStepUp, 403);
    expect((await server.call('GET', '/api/auth/step-up', admin)).body).toMatchObject({ methods: ['totp'], isFresh: false, windowSeconds: WINDOW_SECONDS });
    expectStatus(await deleteFile(local.id, 'b.sql.gz', admin), 403);
    expect(existsSync(join(dir, 'b.sql.gz'))).toBe(true);

    // A fresh code (the next step: the confirming code used this one) allows the delete; audited with its proof.
    const steppedUp = await server.call('POST', '/api/auth/step-up', admin, { code: totpForStep(secret, enrolledStep + 1) });
    expectStatus(steppedUp, 200);
    expect(steppedUp.body).toMatchObject({ isFresh: true, freshUntil: expect.any(String) });
    expectStatus(await deleteFile(local.id, 'b.sql.gz', admin), 200);
    expect(existsSync(join(dir, 'b.sql.gz'))).toBe(false);
    const deletedB = (await auditOf('protected-action')).find((entry) => entry.details?.file === 'b.sql.gz');
    expect(deletedB).toMatchObject({ resource: 'storage', resourceId: local.id, details: { action: 'backup.delete', proof: 'totp', via: 'session' } });
    expect((await auditOf('step-up')).length).toBeGreaterThanOrEqual(1);

    // API keys: without the option a key cannot delete, whatever its permissions.
    const permissions = ['storage:read', 'storage:delete'];
    const plainKey = await create('/api/api-keys', { name: 'no deletion', permissions });
    expect(plainKey.apiKey.allowBackupDeletion).toBe(false);
    const keyRefused = await deleteFile(local.id, 'c.sql.gz', { bearer: plainKey.key });
    expectStatus(keyRefused, 403);
    expect(keyRefused.body.error).toMatch(/allowBackupDeletion/);
    expect(keyRefused.body.details).toMatchObject({ code: 'API_KEY_NOT_ALLOWED', option: 'allowBackupDeletion' });
    expect(existsSync(join(dir, 'c.sql.gz'))).toBe(true);
    // With it (created while the second factor is fresh), the key deletes.
    const deletingKey = await create('/api/api-keys', { name: 'may delete', permissions, allowBackupDeletion: true });
    expect(deletingKey.apiKey.allowBackupDeletion).toBe(true);
    expectStatus(await deleteFile(local.id, 'c.sql.gz', { bearer: deletingKey.key }), 200);
    expect(existsSync(join(dir, 'c.sql.gz'))).toBe(false);
    expect((await auditOf('protected-action')).find((entry) => entry.details?.file === 'c.sql.gz')?.details).toMatchObject({ proof: 'api-key', via: 'apikey', apiKeyId: deletingKey.apiKey.id });

    // Other protected actions, once the window has passed: unlocking, deleting a destination or a profile, changing retention.
    const spare = await create('/api/adapters', { name: 'spare disk', type: 'storage', adapterId: 'local', config: { path: dir } });
    const profile = await create('/api/vault', { name: 'doomed key' });
    const source = await create('/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const week = await create('/api/retention-policies', { name: 'Week', config: { mode: 'gfs', daily: 7 } });
    const day = await create('/api/retention-policies', { name: 'Day', config: { mode: 'gfs', daily: 1 } });
    const destinations = (retentionPolicyId: string) => [{ configId: local.id, priority: 0, retentionPolicyId }];
    const job = await create('/api/jobs', { name: 'kept', schedule: '0 3 * * *', sourceId: source.id, databases: ['shop'], destinations: destinations(week.id) });
    // Sent unchanged, retention is not a protected change.
    expectStatus(await server.call('PUT', `/api/jobs/${job.id}`, admin, { name: 'kept', destinations: destinations(week.id) }), 200);

    await new Promise((resolve) => setTimeout(resolve, (WINDOW_SECONDS + 1) * 1000));
    expect((await server.call('GET', '/api/auth/step-up', admin)).body.isFresh).toBe(false);
    const stale = [
      await server.call('POST', `/api/storage/${local.id}/lock`, admin, { file: 'd.sql.gz', locked: false }),
      await server.call('DELETE', `/api/adapters/${spare.id}`, admin),
      await server.call('DELETE', `/api/vault/${profile.id}`, admin),
      await server.call('PUT', `/api/jobs/${job.id}`, admin, { destinations: destinations(day.id) }),
      await server.call('PUT', `/api/retention-policies/${week.id}`, admin, { config: { mode: 'gfs', daily: 2 } }),
      await server.call('PUT', `/api/adapters/${local.id}`, admin, { defaultRetentionPolicyId: day.id }),
    ];
    expect(stale.map((answer) => [answer.status, answer.body.details?.code, answer.body.details?.action])).toEqual([
      [403, 'SECOND_FACTOR_REQUIRED', 'backup.unlock'],
      [403, 'SECOND_FACTOR_REQUIRED', 'destination.delete'],
      [403, 'SECOND_FACTOR_REQUIRED', 'encryption-profile.delete'],
      [403, 'SECOND_FACTOR_REQUIRED', 'retention.change'],
      [403, 'SECOND_FACTOR_REQUIRED', 'retention.change'],
      [403, 'SECOND_FACTOR_REQUIRED', 'retention.change'],
    ]);
    // Other fields of a destination, its config sent back as stored, are no protected change.
    expectStatus(await server.call('PUT', `/api/adapters/${local.id}`, admin, { name: 'local disk 2', config: { path: dir } }), 200);
    // A policy's name, or its rules sent unchanged, are no retention change.
    expectStatus(await server.call('PUT', `/api/retention-policies/${week.id}`, admin, { name: 'One week', config: { daily: 7, mode: 'gfs' } }), 200);
    // Nothing changed.
    expect((await server.call('GET', `/api/storage/${local.id}/files?refresh=true`, admin)).body.find((file: any) => file.path === 'd.sql.gz')?.locked).toBe(true);
    expectStatus(await server.call('GET', `/api/adapters/${spare.id}`, admin), 200);
    expectStatus(await server.call('GET', `/api/vault/${profile.id}`, admin), 200);
    expect((await server.call('GET', `/api/jobs/${job.id}`, admin)).body.destinations[0].retentionPolicyId).toBe(week.id);
    expect((await server.call('GET', `/api/retention-policies/${week.id}`, admin)).body.config).toMatchObject({ daily: 7 });

    // Locking never needs one.
    expectStatus(await server.call('POST', `/api/storage/${local.id}/lock`, admin, { file: 'b2.sql.gz', locked: true }), 404);

    // A current code on the request itself (scripted clients) allows it and refreshes the session for the next ones.
    // The step-up used step enrolledStep + 1; the next code must be later and within one step of now.
    while (stepAt() < enrolledStep + 1) await new Promise((resolve) => setTimeout(resolve, 500));
    await awayFromStepBoundary();
    const inlineCode = totpForStep(secret, Math.max(enrolledStep + 2, stepAt()));
    const unlocked = await fetch(`${server.url}/api/storage/${local.id}/lock`, {
      method: 'POST',
      headers: { cookie: admin.cookie!, 'x-csrf-token': admin.csrf!, 'content-type': 'application/json', 'x-holdfast-second-factor': inlineCode },
      body: JSON.stringify({ file: 'd.sql.gz', locked: false }),
    });
    expect(unlocked.status, await unlocked.clone().text()).toBe(200);
    expectStatus(await server.call('DELETE', `/api/adapters/${spare.id}`, admin), 200);
    expectStatus(await server.call('DELETE', `/api/vault/${profile.id}`, admin), 200);
    expectStatus(await server.call('PUT', `/api/jobs/${job.id}`, admin, { destinations: destinations(day.id) }), 200);
    expectStatus(await server.call('PUT', `/api/retention-policies/${week.id}`, admin, { config: { mode: 'gfs', daily: 2 } }), 200);
    expectStatus(await server.call('PUT', `/api/adapters/${local.id}`, admin, { defaultRetentionPolicyId: day.id }), 200);

    const done = (await auditOf('protected-action')).map((entry) => entry.details?.action);
    expect(done).toEqual(expect.arrayContaining(['backup.delete', 'backup.unlock', 'destination.delete', 'encryption-profile.delete', 'retention.change', 'api-key.allow-backup-deletion']));
    // Every protected action raised the notification event (raised after the response; give listeners a moment).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events.map((event) => event.action).sort()).toEqual(
      ['api-key.allow-backup-deletion', 'backup.delete', 'backup.delete', 'backup.delete', 'backup.unlock', 'destination.delete', 'encryption-profile.delete', 'retention.change', 'retention.change', 'retention.change'].sort(),
    );
    expect(events.find((event) => event.action === 'backup.unlock')).toMatchObject({ proof: 'totp', via: 'session', resource: 'storage', resourceId: local.id, details: { file: 'd.sql.gz' } });
  }, 180_000);
});
