// Issue 19 acceptance 1: flipping one byte of a stored backup (plain and encrypted) is found by the next integrity
// check: the run is Partial, file and destination are named in its logs, and exactly one integrity_check_failed
// notification is sent (generic webhook to a local HTTP receiver) and logged. Engine on a real PostgreSQL, backups
// on local disk; plus Verification runs of one file, missing objects, and byte-budgeted runs that continue.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS, type AnyAdapterDefinition } from '@holdfast/kernel';
import { createNotificationsPlugin, NOTIFICATIONS } from '@holdfast/notifications';
import notifyWebhook from '@holdfast/notify-generic-webhook';
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

async function flipByte(path: string, offset?: number): Promise<void> {
  const data = await readFile(path);
  data[offset ?? Math.floor(data.length / 2)]! ^= 0x20;
  await writeFile(path, data);
}

describe('integrity checks and verification runs (engine on PostgreSQL, local storage, webhook notification)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let hook: HttpReceiver;
  let dirA: string;
  let dirB: string;
  let key: string;
  const backups: Record<string, string> = {};
  const backupIds: string[] = [];

  const messages = (execution: any): string[] => execution.logs.map((entry: { message: string }) => entry.message);
  const integrityRequests = () => hook.requests.filter((request) => JSON.parse(request.body.toString()).eventType === 'integrity_check_failed');

  async function backup(jobId: string): Promise<string> {
    const trigger = await call(server.url, 'POST', `/api/jobs/${jobId}/run`, { key });
    const done = await waitForEnd(server.url, key, trigger.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    backupIds.push(done.id);
    return done.path;
  }

  async function check(body: Record<string, unknown>): Promise<any> {
    const started = await call(server.url, 'POST', '/api/integrity-checks', { key, json: body });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await waitForEnd(server.url, key, started.body.executionId);
    await server.handle.container.resolve(NOTIFICATIONS).idle();
    return done;
  }

  beforeAll(async () => {
    target = await createTarget('postgresql');
    hook = await startHttpReceiver();
    server = await startEngineServer(target, { plugins: [createNotificationsPlugin({ sendTimeoutMs: 5_000 })], adapters: [notifyWebhook] as unknown as AnyAdapterDefinition[] });
    [dirA, dirB] = await Promise.all([mkdtemp(join(tmpdir(), 'hf-integrity-a-')), mkdtemp(join(tmpdir(), 'hf-integrity-b-'))]);
    server.catalog.addConfig({ configId: 'gen', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 20_000 } });
    server.catalog.addConfig({ configId: 'disk-a', name: 'Disk A', kind: 'storage', adapterId: 'local', config: { path: dirA } });
    server.catalog.addConfig({ configId: 'disk-b', name: 'Disk B', kind: 'storage', adapterId: 'local', config: { path: dirB } });
    server.catalog.addConfig({ configId: 'hook', name: 'Ops webhook', kind: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: `${hook.url}/hook` } });
    server.settings.values.set('notifications.config', { globalChannels: ['hook'], events: {} });
    server.catalog.addJob({ id: 'plain', name: 'plain', compression: 'GZIP' }, 'gen', [{ configId: 'disk-a' }]);
    server.catalog.addJob({ id: 'secret', name: 'secret', compression: 'GZIP' }, 'gen', [{ configId: 'disk-a' }, { configId: 'disk-b', priority: 1 }], { profileId: 'vault-1', key: randomBytes(32) });
    key = await server.apiKey('integrity', ['jobs:execute', 'history:read', 'storage:read']);
    backups.plain = await backup('plain');
    // Names have one-second resolution: the second backup of a job a second later gets its own name.
    backups.secret = await backup('secret');
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await hook?.close();
    for (const dir of [dirA, dirB]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a clean installation checks Success and sends nothing', async () => {
    const done = await check({});
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    expect(done.type).toBe('IntegrityCheck');
    expect(messages(done)).toContainEqual(expect.stringMatching(/^3 backup\(s\) checked, \d+ bytes read, 0 problem\(s\)$/));
    expect(messages(done)).toContainEqual(`${backups.secret} on Disk B: ok (sha256, every chunk authenticated)`);
    expect(integrityRequests()).toHaveLength(0);
  });

  it('one flipped byte in a plain and in an encrypted backup: Partial, both named, one notification sent and logged', async () => {
    await flipByte(join(dirA, backups.plain!));
    await flipByte(join(dirB, backups.secret!));
    const done = await check({});
    expect(done.status).toBe('Partial');
    const log = messages(done);
    expect(log).toContainEqual(expect.stringMatching(new RegExp(`^${backups.plain!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on Disk A: checksum mismatch`)));
    const secretLine = log.find((line) => line.startsWith(`${backups.secret} on Disk B:`));
    expect(secretLine).toMatch(/checksum mismatch/);
    expect(secretLine).toMatch(/encryption: chunk \d+ failed authentication/);
    // The untouched copy of the encrypted backup on Disk A still passes.
    expect(log).toContain(`${backups.secret} on Disk A: ok (sha256, every chunk authenticated)`);

    const sent = integrityRequests();
    expect(sent).toHaveLength(1);
    const body = JSON.parse(sent[0]!.body.toString());
    expect(body.title).toBe('Integrity check found 2 problems');
    expect(JSON.stringify(body)).toContain(backups.plain);
    const { entries } = await server.handle.container.resolve(NOTIFICATIONS).store.list({ page: 1, pageSize: 10, eventType: 'integrity_check_failed' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ status: 'Success', executionId: done.id, channelId: 'hook' });
  });

  it('a Verification run of one file names its problem; a job-scoped check covers only that job', async () => {
    const verified = await call(server.url, 'POST', '/api/storage/disk-a/verify', { key, json: { file: backups.secret } });
    expect(verified.status).toBe(200);
    const good = await waitForEnd(server.url, key, verified.body.executionId);
    expect(good).toMatchObject({ type: 'Verification', status: 'Success' });

    const bad = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/storage/disk-a/verify', { key, json: { file: backups.plain } })).body.executionId);
    expect(bad.status).toBe('Partial');
    expect(messages(bad)).toContainEqual(expect.stringMatching(/on Disk A: checksum mismatch/));

    const scoped = await check({ jobId: 'secret' });
    expect(scoped.status).toBe('Partial');
    expect(messages(scoped)).toContainEqual(expect.stringMatching(/^2 backup\(s\) checked/));
    expect(messages(scoped).some((line) => line.includes(backups.plain!))).toBe(false);
  });

  it('a sidecar whose backup file is gone is reported as missing', async () => {
    await unlink(join(dirA, backups.plain!));
    const done = await check({ storageId: 'disk-a' });
    expect(done.status).toBe('Partial');
    expect(messages(done)).toContain(`${backups.plain} on Disk A: missing: the sidecar exists but the backup file is not on the destination`);
  });

  it('the IntegrityChecks port (what the integrity system task calls) queues a budgeted run as the scheduler', async () => {
    const { executionId } = await server.handle.container.resolve(TOKENS.IntegrityChecks).start({ storageId: 'disk-b', byteBudget: 10_000_000 });
    const done = await waitForEnd(server.url, key, executionId);
    expect(done).toMatchObject({ type: 'IntegrityCheck', status: 'Partial' });
    expect(messages(done)[0]).toBe('IntegrityCheck run started (trigger Scheduler: Integrity check task)');
    expect(messages(done)).toContainEqual(expect.stringMatching(/^1 backup\(s\) checked, \d+ bytes read, 1 problem\(s\)$/));
    // What the task waits on: the outcome read back from the execution row.
    const port = server.handle.container.resolve(TOKENS.IntegrityChecks);
    expect(await port.outcome(executionId)).toEqual({ executionId, status: 'Partial', checked: 1, bytes: done.size, problemCount: 1, complete: true, error: expect.any(String) });
    expect(await port.outcome('00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(await port.outcome(backupIds[0]!)).toBeNull();
  });

  it('bad requests answer 4xx naming the problem', async () => {
    expect((await call(server.url, 'POST', '/api/integrity-checks', { key, json: { jobId: 'nope' } })).status).toBe(404);
    expect((await call(server.url, 'POST', '/api/integrity-checks', { key, json: { storageId: 'nope' } })).status).toBe(404);
    const both = await call(server.url, 'POST', '/api/integrity-checks', { key, json: { jobId: 'plain', storageId: 'disk-a' } });
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body)).toContain('either jobId or storageId');
    expect((await call(server.url, 'POST', '/api/integrity-checks', { key, json: { byteBudget: 0 } })).status).toBe(400);
    expect((await call(server.url, 'POST', '/api/storage/disk-a/verify', { key, json: {} })).status).toBe(400);
  });

  it('byte-budgeted runs stop early and the next one continues where the last stopped, wrapping around', async () => {
    const dirC = await mkdtemp(join(tmpdir(), 'hf-integrity-c-'));
    try {
      server.catalog.addConfig({ configId: 'disk-c', name: 'Disk C', kind: 'storage', adapterId: 'local', config: { path: dirC } });
      server.catalog.addJob({ id: 'trio', name: 'trio' }, 'gen', [{ configId: 'disk-c' }]);
      const files = [await backup('trio'), await backup('trio'), await backup('trio')].sort();
      const checkedFiles: string[] = [];
      for (let run = 0; run < 4; run++) {
        const done = await check({ storageId: 'disk-c', byteBudget: 1 });
        expect(done.status).toBe('Success');
        const lines = messages(done).filter((line) => line.includes(' on Disk C: ok'));
        expect(lines).toHaveLength(1);
        checkedFiles.push(lines[0]!.split(' on Disk C: ')[0]!);
        if (run < 2) expect(messages(done)).toContainEqual(expect.stringMatching(/byte budget reached; the next run continues/));
      }
      expect(checkedFiles).toEqual([...files, files[0]]);
    } finally {
      await rm(dirC, { recursive: true, force: true });
    }
  });
});
