// Issue 48 scope 3: direct uploads from a real `holdfast agent` process to a destination (Ceph S3), relayed
// destinations (a local folder on the server) in the same run. The S3 bytes are counted by a proxy in front of Ceph,
// split by the process that sent them: the agent uploads the backup, the server only its sidecar. Restores stay
// relayed (the server reads the copy and streams it to the agent).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineAfter, psql, startAgentTestServer, tableDigestSql, uniqueName, type AgentTestServer, type TestAgent } from './support/agent-harness.js';
import { startCountingProxy, type CountingProxy } from './support/counting-proxy.js';

const rgw = JSON.parse(await readFile('/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json', 'utf8')) as {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
};

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('direct uploads from a real holdfast agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  let s3: S3Client;
  let proxy: CountingProxy;
  const bucket = `hf-agent-direct-${process.pid}-${Date.now().toString(36)}`;
  const databases: string[] = [];
  const lockers: ChildProcess[] = [];
  const source = uniqueName('hf_direct_src');

  beforeAll(async () => {
    s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: rgw });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    proxy = await startCountingProxy(rgw.endpoint);
    databases.push(source);
    await psql(`CREATE DATABASE ${source}`);
    // ~4 MB of incompressible-ish rows: the upload is clearly larger than a sidecar.
    await psql(`CREATE TABLE orders AS SELECT g AS id, md5(g::text) || md5((g * 7)::text) AS note FROM generate_series(1, 60000) g; ALTER TABLE orders ADD PRIMARY KEY (id);`, source);
    server = await startAgentTestServer();
    agent = await server.startAgent('direct-agent');
  }, 120_000);

  afterAll(async () => {
    for (const locker of lockers) locker.kill('SIGKILL');
    await server?.close();
    await proxy?.close();
    for (const database of databases) await psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
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

  async function objectBytes(key: string): Promise<Buffer> {
    const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(await answer.Body!.transformToByteArray());
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
      config: { preset: 'custom', endpoint: proxy.endpoint, region: rgw.region, forcePathStyle: true, bucket, prefix, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    });
  const localDestination = async (name: string) => {
    await mkdir(join(server.work, name));
    return create('/api/adapters', { name, type: 'storage', adapterId: 'local', config: { path: join(server.work, name) } });
  };
  const trigger = async (jobId: string): Promise<string> => {
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.executionId;
  };
  const agentCalls = (method: string, from = 0) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;

  it('accepts transfer relay|direct on a job\'s destinations, answers it, and refuses bad values and direct to a server folder with 400 naming the field', async () => {
    const orders = await pgSource('validated source');
    const bucketDestination = await s3Destination('ceph validated', 'validated');
    const local = await localDestination('local-validated');
    const base = { name: 'transfer validation', schedule: '0 3 * * *', sourceId: orders.id, databases: [source] };
    const created = await create('/api/jobs', { ...base, destinations: [{ configId: bucketDestination.id, transfer: 'direct' }, { configId: local.id, priority: 1 }] });
    expect(created.destinations.map((d: any) => d.transfer)).toEqual(['direct', 'relay']);
    const read = await server.call('GET', `/api/jobs/${created.id}`);
    expect((read.body.destinations ?? read.body.data?.destinations).map((d: any) => d.transfer)).toEqual(['direct', 'relay']);
    const updated = await server.call('PUT', `/api/jobs/${created.id}`, { destinations: [{ configId: bucketDestination.id, transfer: 'relay' }] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.destinations.map((d: any) => d.transfer)).toEqual(['relay']);

    const badValue = await server.call('POST', '/api/jobs', { ...base, name: 'bad transfer', destinations: [{ configId: bucketDestination.id, transfer: 'teleport' }] });
    // A 400 naming the field, as for the job's other destination checks (a configuration listed twice, not a storage).
    expect(badValue.status, JSON.stringify(badValue.body)).toBe(400);
    expect(JSON.stringify(badValue.body)).toContain('destinations[0].transfer');
    const badType = await server.call('PUT', `/api/jobs/${created.id}`, { destinations: [{ configId: bucketDestination.id, transfer: true }] });
    expect(badType.status, JSON.stringify(badType.body)).toBe(400);
    expect(JSON.stringify(badType.body)).toContain('transfer');
    const serverFolder = await server.call('POST', '/api/jobs', { ...base, name: 'direct to a server folder', destinations: [{ configId: local.id, transfer: 'direct' }] });
    expect(serverFolder.status, JSON.stringify(serverFolder.body)).toBe(400);
    expect(JSON.stringify(serverFolder.body)).toMatch(/destinations\[0\]\.transfer.*only relay reaches it/);
    // Nothing was created by the refused requests.
    const jobs = await server.call('GET', '/api/jobs');
    const names = (jobs.body.data ?? jobs.body).map((job: any) => job.name);
    expect(names).not.toContain('bad transfer');
    expect(names).not.toContain('direct to a server folder');
  });

  it('uploads from the agent straight to S3 while relaying to a local folder: identical bytes, sidecars, restore identical, S3 bytes not through the server, nothing on the agent\'s disk', async () => {
    const orders = await pgSource('orders direct');
    const bucketDestination = await s3Destination('ceph direct', 'direct');
    const local = await localDestination('local-relayed');
    const job = await create('/api/jobs', {
      name: 'direct roundtrip',
      schedule: '0 3 * * *',
      sourceId: orders.id,
      databases: [source],
      compression: 'GZIP',
      destinations: [
        { configId: bucketDestination.id, priority: 0, transfer: 'direct' },
        { configId: local.id, priority: 1, transfer: 'relay' },
      ],
    });
    const before = agent.process.stdoutLines.length;
    const sentBefore = { ...proxy.sent };
    const backup = await server.settled(await trigger(job.id));
    expect(backup.status, JSON.stringify(backup.logs?.slice(-8))).toBe('Success');
    expect(agentCalls('directDump', before)).toBe(1);
    expect(agentCalls('dump', before)).toBe(0);
    expect(JSON.stringify(backup.logs)).toContain('direct uploads from the agent to ceph direct; relayed through the server to local-relayed');

    const localFiles = (await readdir(join(server.work, 'local-relayed'))).filter((name) => !name.endsWith('.meta.json'));
    expect(localFiles).toHaveLength(1);
    const file = localFiles[0]!;
    expect(file).toMatch(/\.gz$/);
    expect(await bucketKeys('direct/')).toEqual([`direct/${file}`, `direct/${file}.meta.json`]);
    const localBytes = await readFile(join(server.work, 'local-relayed', file));
    const s3Bytes = await objectBytes(`direct/${file}`);
    expect(s3Bytes.equals(localBytes)).toBe(true);
    // Gzip, compressed once (the relay stored the agent's bytes as they are).
    expect(localBytes.subarray(0, 2).toString('hex')).toBe('1f8b');
    const sidecar = JSON.parse(await readFile(join(server.work, 'local-relayed', `${file}.meta.json`), 'utf8'));
    const s3Sidecar = JSON.parse((await objectBytes(`direct/${file}.meta.json`)).toString('utf8'));
    const { createHash } = await import('node:crypto');
    expect(sidecar.sha256).toBe(createHash('sha256').update(localBytes).digest('hex'));
    expect(sidecar.size).toBe(localBytes.length);
    expect(s3Sidecar.sha256).toBe(sidecar.sha256);
    expect(sidecar.compression).toMatchObject({ codec: 'GZIP' });
    expect(sidecar.databases).toEqual([source]);
    expect(backup.size).toBe(localBytes.length);

    // The backup's bytes went to S3 from the agent; the server sent only the sidecar (and its verification requests).
    const fromAgent = proxy.sent.others - sentBefore.others;
    const fromServer = proxy.sent.server - sentBefore.server;
    expect(fromAgent).toBeGreaterThan(localBytes.length);
    expect(fromServer).toBeLessThan(Math.min(64 * 1024, localBytes.length / 4));
    expect(localBytes.length).toBeGreaterThan(1024 * 1024);
    // The agent wrote nothing to its disk: its state directory holds its key and enrollment only.
    expect((await readdir(agent.stateDir)).sort()).toEqual(['agent-key.pem', 'agent.json']);

    // Restores stay relayed: from the S3 copy through the agent into a new database.
    const restored = uniqueName('hf_direct_restored');
    databases.push(restored);
    const restore = await server.call('POST', `/api/storage/${bucketDestination.id}/restore`, { file, database: restored, targetSourceId: orders.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await server.settled(restore.body.executionId);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-6))).toBe('Success');
    const expected = await psql(tableDigestSql('orders'), source);
    expect(expected).toMatch(/^60000:/);
    expect(await psql(tableDigestSql('orders'), restored)).toBe(expected);
  }, 180_000);

  it('encrypts and compresses on the agent for a direct-only job: the restore is identical', async () => {
    const profile = await create('/api/vault', { name: 'direct key' });
    const orders = await pgSource('orders encrypted direct');
    const bucketDestination = await s3Destination('ceph encrypted', 'encrypted');
    const job = await create('/api/jobs', {
      name: 'direct encrypted',
      schedule: '0 3 * * *',
      sourceId: orders.id,
      databases: [source],
      compression: 'GZIP',
      encryptionProfileId: profile.id,
      destinations: [{ configId: bucketDestination.id, transfer: 'direct' }],
    });
    const before = agent.process.stdoutLines.length;
    const backup = await server.settled(await trigger(job.id));
    expect(backup.status, JSON.stringify(backup.logs?.slice(-8))).toBe('Success');
    expect(agentCalls('directDump', before)).toBe(1);
    const keys = await bucketKeys('encrypted/');
    expect(keys).toHaveLength(2);
    const key = keys.find((name) => !name.endsWith('.meta.json'))!;
    expect(key).toMatch(/\.enc$/);
    const sidecar = JSON.parse((await objectBytes(`${key}.meta.json`)).toString('utf8'));
    expect(sidecar.encryption).toMatchObject({ algorithm: 'AES-256-GCM' });
    const stored = await objectBytes(key);
    expect(sidecar.sha256).toBe((await import('node:crypto')).createHash('sha256').update(stored).digest('hex'));
    // Encrypted: the dump's text is nowhere in the stored bytes.
    expect(stored.includes(Buffer.from('CREATE TABLE'))).toBe(false);
    const restored = uniqueName('hf_direct_enc_restored');
    databases.push(restored);
    const file = key.slice('encrypted/'.length);
    const restore = await server.call('POST', `/api/storage/${bucketDestination.id}/restore`, { file, database: restored, targetSourceId: orders.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await server.settled(restore.body.executionId);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-6))).toBe('Success');
    expect(await psql(tableDigestSql('orders'), restored)).toBe(await psql(tableDigestSql('orders'), source));
  }, 180_000);

  it('cancels a direct run: the agent aborts the dump and its upload, the run is Cancelled, nothing stays in the bucket', async () => {
    const locked = uniqueName('hf_direct_cancel');
    databases.push(locked);
    await psql(`CREATE DATABASE ${locked}`);
    await psql(`CREATE TABLE held (id int)`, locked);
    const lockerName = `hf-direct-locker-${locked}`;
    const locker = spawn('psql', ['-X', '-h', '127.0.0.1', '-U', 'root', '-d', locked, '-c', 'BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], {
      stdio: 'ignore',
      env: { ...process.env, PGAPPNAME: lockerName },
    });
    lockers.push(locker);
    const waiting = async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${locked}' AND wait_event_type = 'Lock'`));
    await waitUntil('the lock to be held', async () => Number(await psql(`SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = '${locked}' AND l.mode = 'AccessExclusiveLock' AND l.granted`)) > 0);
    const sourceConfig = await pgSource('cancelled direct source');
    const bucketDestination = await s3Destination('ceph cancel direct', 'cancelled');
    const job = await create('/api/jobs', { name: 'direct cancel', schedule: '0 3 * * *', sourceId: sourceConfig.id, databases: [locked], destinations: [{ configId: bucketDestination.id, transfer: 'direct' }] });
    const before = agent.process.stdoutLines.length;
    const runId = await trigger(job.id);
    await waitUntil('pg_dump to wait for the lock', async () => (await waiting()) > 0, 60_000);
    const cancelled = await server.call('POST', `/api/executions/${runId}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const ended = await server.settled(runId);
    expect(ended.status).toBe('Cancelled');
    await lineAfter(agent.process, before, 'call failed', 15_000, (line) => line.method === 'directDump');
    await waitUntil('pg_dump to end', async () => (await waiting()) === 0, 15_000);
    expect(await bucketKeys('cancelled/')).toEqual([]);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'cancelled/' }))).Uploads ?? []).toEqual([]);
    // The server session outlives a killed psql while it sleeps: end it so the lock goes.
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${lockerName}'`);
    locker.kill('SIGKILL');
  }, 90_000);

  it('fails as interrupted when the agent is killed mid-direct-upload, leaves no object or multipart upload, and the next run succeeds', async () => {
    const big = uniqueName('hf_direct_big');
    const locked = uniqueName('hf_direct_locked');
    databases.push(big, locked);
    await psql(`CREATE DATABASE ${big}`);
    await psql(`CREATE DATABASE ${locked}`);
    await psql(`CREATE TABLE blob AS SELECT g AS id, md5(random()::text) || md5(random()::text) || md5(random()::text) AS body FROM generate_series(1, 150000) g`, big);
    await psql(`CREATE TABLE held (id int)`, locked);
    const lockerName = `hf-direct-locker-${locked}`;
    const locker = spawn('psql', ['-X', '-h', '127.0.0.1', '-U', 'root', '-d', locked, '-c', 'BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], {
      stdio: 'ignore',
      env: { ...process.env, PGAPPNAME: lockerName },
    });
    lockers.push(locker);
    await waitUntil('the lock to be held', async () => Number(await psql(`SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = '${locked}' AND l.mode = 'AccessExclusiveLock' AND l.granted`)) > 0);
    const sourceConfig = await pgSource('killed direct source');
    const bucketDestination = await s3Destination('ceph killed direct', 'killed');
    const job = await create('/api/jobs', { name: 'direct killed', schedule: '0 3 * * *', sourceId: sourceConfig.id, databases: [big, locked], compression: 'NONE', destinations: [{ configId: bucketDestination.id, transfer: 'direct' }] });
    const sentBefore = proxy.sent.others;
    const runId = await trigger(job.id);
    await waitUntil('pg_dump to wait for the lock', async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${locked}' AND wait_event_type = 'Lock'`)) > 0, 60_000);
    // Parts of the first database are on their way to S3 from the agent (a multipart upload is open).
    const openUploads = async () => (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'killed/' }))).Uploads ?? [];
    await waitUntil('a multipart upload from the agent', async () => (await openUploads()).length > 0 && proxy.sent.others - sentBefore > 1024 * 1024, 30_000);
    agent.process.child.kill('SIGKILL');
    const failed = await server.settled(runId);
    expect(failed.status).toBe('Failed');
    expect(failed.error).toMatch(/interrupted: agent "direct-agent" disconnected during directDump/);
    expect(await bucketKeys('killed/')).toEqual([]);
    await waitUntil('the multipart upload to be aborted', async () => (await openUploads()).length === 0, 15_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await openUploads())}`);
    });
    // The server session outlives a killed psql while it sleeps: end it so the lock goes.
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${lockerName}'`);
    locker.kill('SIGKILL');
    await agent.restart();
    const next = await server.settled(await trigger(job.id));
    expect(next.status, JSON.stringify(next.logs?.slice(-8))).toBe('Success');
    const keys = await bucketKeys('killed/');
    expect(keys).toHaveLength(2);
    expect((await stat(agent.stateDir)).isDirectory()).toBe(true);
    expect((await readdir(agent.stateDir)).sort()).toEqual(['agent-key.pem', 'agent.json']);
  }, 240_000);
});
