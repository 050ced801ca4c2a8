// Issue 19 on the assembled product (real catalog, engine, notifications; PostgreSQL database; local storage): a
// job configured over HTTP with an encryption profile and a test restore target on a separate scratch server is
// backed up, test-restored (duration recorded, no scratch left), then one flipped byte is found by the next
// integrity check: run Partial, file and destination in the logs, exactly one notification sent and logged.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, psql, seedDatabase } from './support/postgres-data.js';

async function settled(server: FullServer, caller: Caller, executionId: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    expect(answer.status).toBe(200);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('verification, integrity checks and test restores on the assembled server (postgresql)', () => {
  const source = databaseName('verify');
  let server: FullServer;
  let admin: Caller;
  let receiver: HttpReceiver;
  let storageDir: string;
  const ids: Record<string, string> = {};

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const answer = await server.call(method, path, admin, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  };
  const messages = (execution: any): string[] => execution.logs.map((entry: { message: string }) => entry.message);

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    server = await startFullServer('postgresql');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    await seedDatabase(source, 3000);
    storageDir = await mkdtemp(join(tmpdir(), 'holdfast-verify-e2e-'));
    // Production is excluded from restores; test restores go to a scratch server configuration.
    ids.pg = (await call('POST', '/api/adapters', { name: 'orders db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, excludeFromRestore: true }, 201)).id;
    ids.scratch = (await call('POST', '/api/adapters', { name: 'scratch server', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } }, 201)).id;
    ids.local = (await call('POST', '/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: storageDir } }, 201)).id;
    ids.hook = (await call('POST', '/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: `${receiver.url}/hook` } }, 201)).id;
    ids.vault = (await call('POST', '/api/vault', { name: 'offsite key' }, 201)).id;
    const job = await call(
      'POST',
      '/api/jobs',
      {
        name: 'orders',
        schedule: '0 3 * * *',
        sourceId: ids.pg,
        databases: [source],
        compression: 'GZIP',
        encryptionProfileId: ids.vault,
        destinations: [{ configId: ids.local }],
        testRestore: { target: { type: 'database', sourceId: ids.scratch } },
      },
      201,
    );
    ids.job = job.id;
    expect(job.testRestore).toEqual({ target: { type: 'database', sourceId: ids.scratch } });
    await call('PUT', '/api/settings', { 'notifications.config': { globalChannels: [ids.hook], events: {} } });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await dropDatabase(source);
    if (storageDir) await rm(storageDir, { recursive: true, force: true });
  });

  it('backs up, test-restores into a throwaway database on the scratch server and records the restore time', async () => {
    const backup = await settled(server, admin, (await call('POST', `/api/jobs/${ids.job}/run`)).executionId);
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    expect(messages(backup)).toContain('destination local disk: verified (streamed-sha256)');
    ids.file = backup.path;

    const tested = await settled(server, admin, (await call('POST', `/api/jobs/${ids.job}/test-restore`)).executionId);
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain(`check ${source}: row counts: ok (3002 rows in 2 tables match)`);
    // Scratch names carry the execution id's first 12 hex digits (other suites may test-restore on this server too).
    const tag = (tested.id as string).replace(/-/g, '').slice(0, 12);
    expect(await psql('postgres', `SELECT count(*) FROM pg_database WHERE datname LIKE 'hf_test_restore_${tag}_%'`)).toBe('0');
    expect(messages(tested)).toContainEqual(expect.stringMatching(new RegExp(`^scratch removed: database hf_test_restore_${tag}_0 on scratch server$`)));
    const time = (await call('GET', `/api/jobs/${ids.job}/restore-time`)).data;
    expect(time.measuredRestoreMs).toBeGreaterThan(0);
    expect(time.measuredExecutionId).toBe(tested.id);
    expect((await call('GET', '/api/dashboard/restore-times')).data).toContainEqual(expect.objectContaining({ jobId: ids.job, jobName: 'orders' }));
  });

  it('one flipped byte is found by the next integrity check: Partial, named, one notification sent and logged', async () => {
    const path = join(storageDir, ids.file!);
    const data = await readFile(path);
    data[Math.floor(data.length / 2)]! ^= 0x01;
    await writeFile(path, data);

    const done = await settled(server, admin, (await call('POST', '/api/integrity-checks', { jobId: ids.job })).executionId);
    expect(done).toMatchObject({ type: 'IntegrityCheck', status: 'Partial' });
    expect(messages(done)).toContainEqual(expect.stringMatching(new RegExp(`^${ids.file!.replace(/\./g, '\\.')} on local disk: checksum mismatch.*encryption: chunk \\d+ failed authentication$`)));

    const deadline = Date.now() + 20_000;
    let entries: any[] = [];
    while (Date.now() < deadline) {
      entries = (await call('GET', `/api/notifications/log?executionId=${done.id}`)).entries;
      if (entries.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'integrity_check_failed', status: 'Success', channelId: ids.hook });
    const sent = receiver.requests.filter((request) => JSON.parse(request.body.toString()).eventType === 'integrity_check_failed');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.toString()).toContain(ids.file!);
  });
});
