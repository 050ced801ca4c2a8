// Issue 48, acceptance 1: the server cannot reach the database. A network namespace holds a PostgreSQL instance that
// listens only on the namespace's own loopback, plus a real `holdfast agent` that reaches the server through a veth
// pair. A backup through the agent goes to S3 (Ceph RGW) and a local folder on the server; a restore through the
// agent into a new database name compares identical. Where namespaces cannot be made, the test says so (a skip with
// the reason) and the second case uses a database reachable only on a Unix socket the server is not told about.
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentTestServer, tableDigestSql, type AgentTestServer } from './support/agent-harness.js';

const exec = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const rgw = JSON.parse(await readFile('/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json', 'utf8')) as { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };

// Short, unique names (interface names are limited to 15 characters).
const tag = (process.pid % 100_000).toString(36) + Date.now().toString(36).slice(-3);
const NS = `hfns${tag}`;
const HOST_IF = `hfh${tag}`;
const NS_IF = `hfn${tag}`;
const octet = 16 + (process.pid % 200);
const HOST_IP = `10.231.${octet}.1`;
const PG_PORT = 55_000 + (process.pid % 400);

/** Makes the namespace and veth pair; the reason when this machine does not allow it. */
async function makeNamespace(): Promise<string | undefined> {
  // Lets the fallback be exercised on a machine that has namespaces.
  if (process.env.HOLDFAST_TEST_NO_NETNS === '1') return 'network namespaces disabled by HOLDFAST_TEST_NO_NETNS=1';
  try {
    await exec('ip', ['netns', 'add', NS]);
    await exec('ip', ['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF]);
    await exec('ip', ['link', 'set', NS_IF, 'netns', NS]);
    await exec('ip', ['addr', 'add', `${HOST_IP}/30`, 'dev', HOST_IF]);
    await exec('ip', ['link', 'set', HOST_IF, 'up']);
    await exec('ip', ['netns', 'exec', NS, 'ip', 'addr', 'add', `10.231.${octet}.2/30`, 'dev', NS_IF]);
    await exec('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', NS_IF, 'up']);
    await exec('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
    return undefined;
  } catch (error) {
    return `network namespaces are not available here: ${(error as Error).message.split('\n')[0]}`;
  }
}

async function removeNamespace(): Promise<void> {
  await exec('ip', ['link', 'del', HOST_IF]).catch(() => undefined);
  await exec('ip', ['netns', 'del', NS]).catch(() => undefined);
}

/** A PostgreSQL instance of its own: trust auth for `root`, listening on `listen` (or only on its socket). */
async function startPostgres(dir: string, listen: string, wrap: string[]): Promise<void> {
  await chown(dir, 101, 104);
  await chmod(dir, 0o700);
  const asPostgres = (bin: string, args: string[]) => exec(wrap[0] ?? 'runuser', [...wrap.slice(1), ...(wrap.length ? ['runuser'] : []), '-u', 'postgres', '--', join(PG_BIN, bin), ...args]);
  await asPostgres('initdb', ['-D', join(dir, 'data'), '-U', 'root', '--auth=trust', '--no-sync']);
  await asPostgres('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-o', `-c listen_addresses='${listen}' -c port=${PG_PORT} -c unix_socket_directories='${dir}'`, 'start']);
}

async function stopPostgres(dir: string, wrap: string[]): Promise<void> {
  await exec(wrap[0] ?? 'runuser', [...wrap.slice(1), ...(wrap.length ? ['runuser'] : []), '-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', 'stop']).catch(() => undefined);
}

describe('the server cannot reach the database: it runs through an agent', () => {
  let unavailable: string | undefined;
  let server: AgentTestServer | undefined;
  let pgDir = '';
  let s3: S3Client;
  const bucket = `hf-agent-netns-${tag}`;
  const wrap = () => (unavailable ? [] : ['ip', 'netns', 'exec', NS]);

  beforeAll(async () => {
    unavailable = await makeNamespace();
    if (unavailable) await removeNamespace();
    pgDir = await mkdtemp(join(tmpdir(), 'hf-agent-pg-'));
    // In the namespace: its own loopback only. Without one: no TCP at all, a socket in a folder the server is not told of.
    await startPostgres(pgDir, unavailable ? '' : '127.0.0.1', wrap());
    s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: rgw });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    server = await startAgentTestServer({ host: unavailable ? '127.0.0.1' : '0.0.0.0' });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await stopPostgres(pgDir, wrap());
    if (!unavailable) await removeNamespace();
    await rm(pgDir, { recursive: true, force: true });
    if (s3) {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      for (const object of listed.Contents ?? []) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key! }));
      await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
      s3.destroy();
    }
    // Always gone afterwards, whatever happened.
    expect((await exec('ip', ['netns', 'list'])).stdout).not.toContain(NS);
  });

  /** psql on the database's side (inside the namespace, or on the socket). */
  const dbSql = async (sql: string, database = 'postgres') => {
    const host = unavailable ? pgDir : '127.0.0.1';
    const args = ['-X', '-v', 'ON_ERROR_STOP=1', '-h', host, '-p', String(PG_PORT), '-U', 'root', '-d', database, '-tAc', sql];
    const [command, ...rest] = [...wrap(), 'psql', ...args];
    return (await exec(command!, rest)).stdout.trim();
  };

  it('backs up and restores a database only the agent can reach (S3 on Ceph and a local folder, identical rows)', async (context) => {
    if (unavailable) context.skip(`${unavailable}; the Unix socket case below runs instead`);
    await runRoundTrip('127.0.0.1', `http://${HOST_IP}:${new URL(server!.url).port}`);
  }, 60_000);

  it('without namespaces: a database on a Unix socket the server is not told about', async (context) => {
    if (!unavailable) context.skip('network namespaces work here: the namespace case covers this');
    await runRoundTrip(pgDir, server!.url);
  }, 60_000);

  async function runRoundTrip(dbHost: string, serverUrlForAgent: string): Promise<void> {
    const call = server!.call;
    await dbSql('CREATE DATABASE shop');
    await dbSql(`CREATE TABLE items (id int PRIMARY KEY, label text); INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 5000) g;`, 'shop');
    // The server itself cannot reach it: the same address from the server's network finds nothing.
    const fromServer = await exec('psql', ['-X', '-h', '127.0.0.1', '-p', String(PG_PORT), '-U', 'root', '-d', 'shop', '-tAc', 'SELECT 1']).then(
      () => 'reached',
      (error: Error) => error.message,
    );
    expect(fromServer).not.toBe('reached');

    const agent = await server!.startAgent(`netns-agent-${tag}`, { wrap: wrap().length ? wrap() : undefined, server: serverUrlForAgent });
    const create = async (path: string, body: unknown) => {
      const answer = await call('POST', path, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const config = { user: 'root', host: dbHost, port: PG_PORT };
    const sourceConfig = await create('/api/adapters', { name: 'shop via agent', type: 'database', adapterId: 'postgres', config, agentId: agent.id });
    // In the namespace, tested from the server it fails (on one machine, a socket path is reachable by both).
    if (!unavailable) expect((await call('POST', '/api/adapters/test-connection', { id: sourceConfig.id, agentId: null })).body.success).toBe(false);
    expect((await call('POST', '/api/adapters/test-connection', { id: sourceConfig.id })).body).toMatchObject({ success: true });

    const cephDestination = await create('/api/adapters', {
      name: 'ceph',
      type: 'storage',
      adapterId: 's3',
      config: { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, bucket, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    });
    await mkdir(join(server!.work, 'local'));
    const local = await create('/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: join(server!.work, 'local') } });
    const job = await create('/api/jobs', { name: 'shop', schedule: '0 3 * * *', sourceId: sourceConfig.id, databases: ['shop'], compression: 'GZIP', destinations: [{ configId: cephDestination.id, priority: 0 }, { configId: local.id, priority: 1 }] });
    const triggered = await call('POST', `/api/jobs/${job.id}/run`, {});
    const backup = await server!.settled(triggered.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    const file = (await readdir(join(server!.work, 'local'))).find((name) => !name.endsWith('.meta.json'))!;
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key);
    expect(keys.sort()).toEqual([file, `${file}.meta.json`]);

    const restore = await call('POST', `/api/storage/${cephDestination.id}/restore`, { file, database: 'shop_restored', targetSourceId: sourceConfig.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restored = await server!.settled(restore.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs?.slice(-6))).toBe('Success');
    // Both ran on the agent.
    const calls = agent.process.stdoutLines.filter((line) => line.includes('"call finished"'));
    expect(calls.some((line) => line.includes('"method":"dump"'))).toBe(true);
    expect(calls.some((line) => line.includes('"method":"restore"'))).toBe(true);
    const expected = await dbSql(tableDigestSql('items'), 'shop');
    expect(expected).toMatch(/^5000:/);
    expect(await dbSql(tableDigestSql('items'), 'shop_restored')).toBe(expected);
  }
});
