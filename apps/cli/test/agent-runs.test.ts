// Issue 48, part 2 (acceptance 2 and the backup/restore half of 1): sources bound to a real `holdfast agent` process.
// A PostgreSQL backup runs on the agent and is relayed by the server to S3 (Ceph RGW) and a local folder; a restore
// runs on the agent into a new database with identical rows; the agent killed mid-dump fails the run as interrupted
// with nothing left at either destination and the queue moves on; an offline agent fails a run after the wait.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineAfter, psql, run, startAgentTestServer, tableDigestSql, uniqueName, type AgentTestServer, type TestAgent } from './support/agent-harness.js';

const rgw = JSON.parse(await readFile('/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json', 'utf8')) as {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
};

/** The agent's wait for an offline agent in this suite (HOLDFAST_AGENT_WAIT_SECONDS). */
const WAIT_SECONDS = 3;

describe('sources run through a real holdfast agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  let s3: S3Client;
  const bucket = `hf-agent-runs-${process.pid}-${Date.now().toString(36)}`;
  const databases: string[] = [];
  const mariaDatabases: string[] = [];
  const lockers: ChildProcess[] = [];
  const source = uniqueName('hf_agent_src');

  beforeAll(async () => {
    s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: rgw });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    databases.push(source);
    await psql(`CREATE DATABASE ${source}`);
    await psql(
      `CREATE TABLE orders (id int PRIMARY KEY, customer text, total numeric(10,2));
       INSERT INTO orders SELECT g, 'customer ' || (g % 97), (g * 7 % 1000) / 10.0 FROM generate_series(1, 20000) g;`,
      source,
    );
    server = await startAgentTestServer({ env: { HOLDFAST_AGENT_WAIT_SECONDS: String(WAIT_SECONDS) } });
    agent = await server.startAgent('runs-agent');
  }, 120_000);

  afterAll(async () => {
    for (const locker of lockers) locker.kill('SIGKILL');
    await server?.close();
    for (const database of databases) await psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    for (const database of mariaDatabases) await run('mysql', ['-h', '127.0.0.1', '-u', 'root', '-e', `DROP DATABASE IF EXISTS ${database}`]).catch(() => undefined);
    if (s3) {
      for (const key of await bucketKeys()) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
      s3.destroy();
    }
  });

  async function bucketKeys(prefix = ''): Promise<string[]> {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (listed.Contents ?? []).map((object) => object.Key!).sort();
  }

  async function create(path: string, body: unknown): Promise<any> {
    const answer = await server.call('POST', path, body);
    expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
    return answer.body;
  }

  const pgSource = (name: string) => create('/api/adapters', { name, type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, agentId: agent.id });
  const s3Destination = (name: string, prefix: string) =>
    create('/api/adapters', {
      name,
      type: 'storage',
      adapterId: 's3',
      config: { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, bucket, prefix, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    });
  const localDestination = async (name: string) => {
    await mkdir(join(server.work, name));
    return create('/api/adapters', { name, type: 'storage', adapterId: 'local', config: { path: join(server.work, name) } });
  };
  const job = (name: string, sourceId: string, dbs: string[], destinationIds: string[]) =>
    create('/api/jobs', { name, schedule: '0 3 * * *', sourceId, databases: dbs, compression: 'GZIP', destinations: destinationIds.map((configId, priority) => ({ configId, priority })) });
  const trigger = async (jobId: string): Promise<string> => {
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.executionId;
  };
  const agentCalls = (method: string, from = 0) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;

  it('backs up through the agent to S3 (Ceph) and a local folder, then restores through the agent into a new database with identical rows', async () => {
    const orders = await pgSource('orders via agent');
    const bucketDestination = await s3Destination('ceph', 'roundtrip');
    const local = await localDestination('local-roundtrip');
    const backupJob = await job('agent roundtrip', orders.id, [source], [bucketDestination.id, local.id]);
    const before = agent.process.stdoutLines.length;
    const backup = await server.settled(await trigger(backupJob.id));
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    // The dump ran on the agent: its log has the call, the server never connected to the database itself.
    expect(agentCalls('dump', before)).toBe(1);

    const localFiles = (await readdir(join(server.work, 'local-roundtrip'), { recursive: true })).filter((name) => !name.endsWith('.meta.json'));
    expect(localFiles).toHaveLength(1);
    const file = localFiles[0]!;
    expect(await bucketKeys('roundtrip/')).toEqual([`roundtrip/${file}`, `roundtrip/${file}.meta.json`]);
    const sidecar = JSON.parse(await readFile(join(server.work, 'local-roundtrip', `${file}.meta.json`), 'utf8'));
    expect(sidecar.databases).toEqual([source]);
    expect(backup.size).toBe(sidecar.size);

    // Restore from the S3 copy through the agent into a database that does not exist yet.
    const restored = uniqueName('hf_agent_restored');
    databases.push(restored);
    const target = await pgSource('restore target via agent');
    const restoreCalls = agent.process.stdoutLines.length;
    const restore = await server.call('POST', `/api/storage/${bucketDestination.id}/restore`, { file, database: restored, targetSourceId: target.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await server.settled(restore.body.executionId);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('restore', restoreCalls)).toBe(1);
    const expected = await psql(tableDigestSql('orders'), source);
    expect(expected).toMatch(/^20000:/);
    expect(await psql(tableDigestSql('orders'), restored)).toBe(expected);
  }, 180_000);

  it('backs up a folder on the agent\'s host and restores it there into a new folder, byte for byte', async () => {
    const folder = join(server.work, 'agent-files');
    await mkdir(join(folder, 'nested'), { recursive: true });
    await writeFile(join(folder, 'a.txt'), 'first file on the agent');
    await writeFile(join(folder, 'nested', 'b.bin'), Buffer.alloc(300_000, 7));
    const files = await create('/api/adapters', { name: 'folder via agent', type: 'database', adapterId: 'directory', config: { paths: [folder] }, agentId: agent.id });
    const local = await localDestination('local-folder');
    const folderJob = await job('agent folder', files.id, [], [local.id]);
    const before = agent.process.stdoutLines.length;
    const backup = await server.settled(await trigger(folderJob.id));
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('dump', before)).toBe(1);
    const file = (await readdir(join(server.work, 'local-folder'))).find((name) => !name.endsWith('.meta.json'))!;
    const target = join(server.work, 'restored-files');
    const restore = await server.call('POST', `/api/storage/${local.id}/restore`, { file, targetSourceId: files.id, targetPath: target });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restored = await server.settled(restore.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('restore', before)).toBe(1);
    const restoredFiles = (await readdir(target, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    expect(restoredFiles).toHaveLength(2);
    const original = await readFile(join(folder, 'nested', 'b.bin'));
    const copy = restoredFiles.find((entry) => entry.name === 'b.bin')!;
    expect((await readFile(join(copy.parentPath, copy.name))).equals(original)).toBe(true);
    // Into the same folder again without overwrite: the server cannot look at the agent's disk, the agent refuses.
    const again = await server.call('POST', `/api/storage/${local.id}/restore`, { file, targetSourceId: files.id, targetPath: target });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const refused = await server.settled(again.body.executionId);
    expect(refused.status).toBe('Failed');
    expect(refused.error).toMatch(/exists now and the restore would replace it.*nothing was changed/);
  }, 90_000);

  it('backs up MariaDB through the agent and restores it into a new database with identical rows', async () => {
    const mariadb = (sql: string) => run('mysql', ['-h', '127.0.0.1', '-u', 'root', '-N', '-B', '-e', sql]).then(({ stdout }) => stdout.trim());
    const shop = uniqueName('hf_agent_maria');
    const restoredName = uniqueName('hf_agent_maria_restored');
    mariaDatabases.push(shop, restoredName);
    await mariadb(`CREATE DATABASE ${shop}; CREATE TABLE ${shop}.items (id int PRIMARY KEY, label varchar(40)); INSERT INTO ${shop}.items SELECT seq, CONCAT('item ', seq) FROM mysql.seq_1_to_3000;`);
    const digest = (database: string) => mariadb(`SELECT COUNT(*), MD5(GROUP_CONCAT(id, label ORDER BY id SEPARATOR '|')) FROM ${database}.items`);
    const maria = await create('/api/adapters', { name: 'maria via agent', type: 'database', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root' }, agentId: agent.id });
    const local = await localDestination('local-maria');
    const mariaJob = await job('agent maria', maria.id, [shop], [local.id]);
    const before = agent.process.stdoutLines.length;
    const backup = await server.settled(await trigger(mariaJob.id));
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    const file = (await readdir(join(server.work, 'local-maria'))).find((name) => !name.endsWith('.meta.json'))!;
    const restore = await server.call('POST', `/api/storage/${local.id}/restore`, { file, database: restoredName, targetSourceId: maria.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restored = await server.settled(restore.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('dump', before)).toBe(1);
    expect(agentCalls('restore', before)).toBe(1);
    expect(await digest(restoredName)).toBe(await digest(shop));
    expect(await digest(shop)).toMatch(/^3000\t/);
  }, 90_000);

  it('tests the connection of a bound source from the agent (version included)', async () => {
    const orders = await pgSource('tested via agent');
    const before = agent.process.stdoutLines.length;
    const tested = await server.call('POST', '/api/adapters/test-connection', { id: orders.id });
    expect(tested.body, JSON.stringify(tested.body)).toMatchObject({ success: true, version: expect.stringMatching(/^\d+/) });
    expect(agentCalls('check', before)).toBe(1);
  });

  it('fails a run whose agent is offline after the configured wait, naming the agent, and tests report it at once', async () => {
    const orders = await pgSource('offline source');
    const local = await localDestination('local-offline');
    const offlineJob = await job('agent offline', orders.id, [source], [local.id]);
    agent.process.child.kill('SIGTERM');
    await agent.process.exited;
    const started = Date.now();
    const failed = await server.settled(await trigger(offlineJob.id));
    const tookMs = Date.now() - started;
    expect(failed.status).toBe('Failed');
    expect(failed.error).toContain(`agent "runs-agent" is offline (waited ${WAIT_SECONDS} s for it to connect)`);
    expect(tookMs).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000);
    expect(tookMs).toBeLessThan(WAIT_SECONDS * 1000 + 20_000);
    expect(await readdir(join(server.work, 'local-offline')).catch(() => [])).toEqual([]);
    const tested = await server.call('POST', '/api/adapters/test-connection', { id: orders.id });
    expect(tested.body).toMatchObject({ success: false, message: expect.stringContaining('agent "runs-agent" is offline') });
    await agent.restart();
  }, 90_000);

  it('fails a run as interrupted when the agent is killed mid-dump, leaves no object at either destination, runs the next queued job, and succeeds after the agent restarts', async () => {
    // Two databases dumped one after the other: the first streams ~10 MB, the second waits on a lock this test
    // holds, so the agent is killed while the dump is under way with bytes already relayed.
    const big = uniqueName('hf_agent_big');
    const locked = uniqueName('hf_agent_locked');
    databases.push(big, locked);
    await psql(`CREATE DATABASE ${big}`);
    await psql(`CREATE DATABASE ${locked}`);
    await psql(`CREATE TABLE blob AS SELECT g AS id, md5(random()::text) || md5(random()::text) || md5(random()::text) AS body FROM generate_series(1, 150000) g`, big);
    await psql(`CREATE TABLE held (id int)`, locked);
    const lockerName = `hf-agent-locker-${process.pid}`;
    const locker = spawn('psql', ['-X', '-h', '127.0.0.1', '-U', 'root', '-d', locked, '-c', 'BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], {
      stdio: 'ignore',
      env: { ...process.env, PGAPPNAME: lockerName },
    });
    lockers.push(locker);
    const lockHeld = async () => Number(await psql(`SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = '${locked}' AND l.mode = 'AccessExclusiveLock' AND l.granted`));
    await waitUntil('the lock to be held', async () => (await lockHeld()) > 0);

    const sourceConfig = await pgSource('killed source');
    const bucketDestination = await s3Destination('ceph killed', 'killed');
    const local = await localDestination('local-killed');
    const killedJob = await job('agent killed', sourceConfig.id, [big, locked], [bucketDestination.id, local.id]);
    // A job the server runs itself (a folder on the server), queued behind the agent's run.
    await mkdir(join(server.work, 'server-files'));
    await writeFile(join(server.work, 'server-files', 'notes.txt'), 'kept on the server');
    const folder = await create('/api/adapters', { name: 'server folder', type: 'database', adapterId: 'directory', config: { paths: [join(server.work, 'server-files')] } });
    const serverJob = await job('server side', folder.id, [], [(await localDestination('local-server-side')).id]);

    const killedRun = await trigger(killedJob.id);
    const queuedRun = await trigger(serverJob.id);
    // pg_dump reached the second database (it waits for the lock): the first one's bytes have gone through.
    await waitUntil('pg_dump to wait for the lock', async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${locked}' AND wait_event_type = 'Lock'`)) > 0, 60_000);
    expect((await server.call('GET', `/api/executions/${queuedRun}`)).body.data.status).toBe('Pending');
    // Bytes of the first database are at the destinations already (the local one writes a temporary file).
    const partial = await readdir(join(server.work, 'local-killed'), { recursive: true, withFileTypes: true });
    const partialBytes = (await Promise.all(partial.filter((entry) => entry.isFile()).map((entry) => stat(join(entry.parentPath, entry.name))))).reduce((sum, info) => sum + info.size, 0);
    expect(partialBytes).toBeGreaterThan(1024 * 1024);
    agent.process.child.kill('SIGKILL');
    const killedAt = Date.now();
    const failed = await server.settled(killedRun);
    const failedAfterMs = Date.now() - killedAt;
    expect(failed.status).toBe('Failed');
    expect(failed.error).toMatch(/interrupted: agent "runs-agent" disconnected during dump/);
    // Documented: a killed agent's connection closes at once (the kernel resets it), so the run ends in seconds.
    expect(failedAfterMs).toBeLessThan(15_000);
    expect(await readdir(join(server.work, 'local-killed'), { recursive: true }).catch(() => [])).toEqual([]);
    expect(await bucketKeys('killed/')).toEqual([]);
    // The multipart upload the fan-out had open is aborted too (its parts are not kept).
    const openUploads = async () => (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'killed/' }))).Uploads ?? [];
    await waitUntil('the multipart upload to be aborted', async () => (await openUploads()).length === 0, 15_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await openUploads())}`);
    });

    const next = await server.settled(queuedRun);
    expect(next.status, JSON.stringify(next.logs?.slice(-4))).toBe('Success');

    // The backend sleeping in pg_sleep does not notice its client is gone: end it on the server.
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${lockerName}'`);
    locker.kill('SIGKILL');
    await waitUntil('the lock to be released', async () => (await lockHeld()) === 0);
    await agent.restart();
    const retried = await server.settled(await trigger(killedJob.id));
    expect(retried.status, JSON.stringify(retried.logs?.slice(-6))).toBe('Success');
    expect((await bucketKeys('killed/')).filter((key) => !key.endsWith('.meta.json'))).toHaveLength(1);
  }, 240_000);

  it('cancels a run on the agent: the engine\'s cancel aborts the dump there (pg_dump ends) and the run is Cancelled', async () => {
    const locked = uniqueName('hf_agent_cancel');
    databases.push(locked);
    await psql(`CREATE DATABASE ${locked}`);
    await psql(`CREATE TABLE held (id int)`, locked);
    const lockerName = `hf-agent-cancel-${process.pid}`;
    const locker = spawn('psql', ['-X', '-h', '127.0.0.1', '-U', 'root', '-d', locked, '-c', 'BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], {
      stdio: 'ignore',
      env: { ...process.env, PGAPPNAME: lockerName },
    });
    lockers.push(locker);
    const waiting = async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${locked}' AND wait_event_type = 'Lock'`));
    await waitUntil('the lock to be held', async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${lockerName}' AND state = 'active'`)) > 0);
    const sourceConfig = await pgSource('cancelled source');
    const cancelJob = await job('agent cancel', sourceConfig.id, [locked], [(await localDestination('local-cancel')).id]);
    const before = agent.process.stdoutLines.length;
    const runId = await trigger(cancelJob.id);
    await waitUntil('pg_dump to wait for the lock', async () => (await waiting()) > 0, 60_000);
    const cancelled = await server.call('POST', `/api/executions/${runId}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const ended = await server.settled(runId);
    expect(ended.status).toBe('Cancelled');
    // On the agent the call was aborted: its log says so and pg_dump's session is gone while the lock is still held.
    await lineAfter(agent.process, before, 'call failed', 15_000, (line) => line.method === 'dump');
    await waitUntil('pg_dump to end', async () => (await waiting()) === 0, 15_000);
    expect(await readdir(join(server.work, 'local-cancel'))).toEqual([]);
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${lockerName}'`);
  }, 90_000);

  async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
});
