// Issue 43 acceptance 3 with a real crash: two Holdfast processes share one PostgreSQL state database (scale-out), each
// with its own data directory. The child (pitr-child.mjs) holds the job's lease and streams; the in-process server
// waits. SIGKILL the child while a writer commits: the other process takes the lease and the slot over within one
// supervisor pass plus the slot takeover, the archive has no gap, the window keeps its start, and a restore to
// `latest` holds every committed row. A throwaway PostgreSQL 15 cluster is the source (fault-cluster.ts).
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourcePostgres from '@holdfast/source-postgres';
import { createLocalPathPolicy, TOKENS, type AnyAdapterDefinition } from '@holdfast/kernel';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryJobCatalog } from '../support/doubles.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { asPostgres, freePort, OwnCluster, PG_BIN, receiversOf, sleep, Writer } from './fault-cluster.js';
import { startPitrChild } from './pitr-child-process.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `pitrtakeover${SUFFIX}`;
const SLOT = `holdfast_${JOB}`;
const ROLE = { user: 'holdfast_takeover', password: randomBytes(12).toString('hex') };
/** With the tests' supervisor timings (a pass every 200 ms) the takeover takes seconds; the slot takeover waits up to 5 s. */
const TAKEOVER_LIMIT_MS = 20_000;

describe('two processes on one PostgreSQL: the survivor takes a killed streamer\'s job over (issue 43 acceptance 3)', () => {
  let cluster: OwnCluster;
  let writer: Writer;
  let target: TestDatabaseTarget;
  let childDataDir: string;
  let destination: string;
  let work: string;
  let child: ChildProcess | undefined;
  let server: PitrServer | undefined;
  let key: string;
  const source = () => ({ mode: 'physical', host: '127.0.0.1', port: cluster.port, user: ROLE.user, password: ROLE.password, walFlushIntervalSeconds: 1 });

  beforeAll(async () => {
    cluster = await OwnCluster.create(ROLE);
    writer = new Writer(cluster);
    target = await createTarget('postgresql');
    childDataDir = await mkdtemp(join(tmpdir(), 'hf-pitr-takeover-child-'));
    destination = await mkdtemp(join(tmpdir(), 'hf-pitr-takeover-dest-'));
    work = await mkdtemp(join(tmpdir(), 'hf-pitr-takeover-restore-'));
    await chmod(work, 0o755);
  }, 60_000);

  afterAll(async () => {
    await writer?.stop().catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close().catch(() => undefined);
    for (const receiver of await receiversOf(join(childDataDir ?? '/nonexistent', 'pitr-spool', JOB)).catch(() => [])) {
      try {
        process.kill(receiver.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await cluster?.remove();
    for (const dir of [childDataDir, destination, work]) if (dir) await rm(dir, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('SIGKILL of the streaming process: the other takes the lease and the slot over, no gap, every row restores', async () => {
    const first = await startChild();
    child = first.child;
    await until('the child streaming', async () => (await pointInTime(first.url, first.key))?.streaming?.state === 'streaming', 60_000);
    const base = await call(first.url, 'POST', `/api/jobs/${JOB}/run`, { key: first.key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(first.url, first.key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs?.slice?.(-10))).toBe('Success');

    server = await startServer();
    writer.start();
    await sleep(3_000);
    // Both processes answer the same; the child streams, the in-process server waits for the lease.
    const before = await until('a window that reaches the writer', async () => {
      const data = await pointInTime(server!.url, key);
      return data?.window && Date.parse(data.window.end) > writer.commits[0]!.clientAfter ? data : undefined;
    }, 30_000);
    expect(before.streaming.process.pid).toBe(first.child.pid);
    expect(before.gaps).toEqual([]);
    expect(await receiversOf(join(target.dataDir, 'pitr-spool', JOB))).toEqual([]);
    const slotBefore = await cluster.slot(SLOT);
    expect(slotBefore?.active).toBe(true);

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    const taken = await until('the survivor streaming on the same slot', async () => {
      const data = await pointInTime(server!.url, key);
      const slot = await cluster.slot(SLOT);
      return data?.streaming?.state === 'streaming' && data.streaming.process?.pid === process.pid && slot?.active && slot.active_pid !== slotBefore!.active_pid ? data : undefined;
    }, TAKEOVER_LIMIT_MS + 10_000);
    const takeoverMs = Date.now() - killedAt;
    process.stdout.write(`pitr takeover: the survivor streamed ${takeoverMs} ms after the SIGKILL\n`);
    expect(taken.streaming.process.id).toBe(server.engine().processId);
    expect(takeoverMs).toBeLessThan(TAKEOVER_LIMIT_MS);
    expect((await cluster.sql('SELECT count(*)::int AS n FROM pg_replication_slots')).at(0)).toEqual({ n: 1 });

    await sleep(3_000);
    const last = await writer.stop();
    expect(writer.commits.filter((commit) => commit.serverAt > killedAt).length).toBeGreaterThan(10);
    const after = await settled(last.clientAfter);
    expect(after.gaps).toEqual([]);
    expect(after.window.start).toBe(before.window.start);
    expect(after.window.baseExecutionId).toBe(before.window.baseExecutionId);
    expect(await restoreLatest()).toEqual(writer.commits.map((commit) => commit.id));
    expect(writer.uncertain.size).toBe(0);
  }, 300_000);

  /** The child Holdfast process over the shared state database; resolves once it printed its URL and key. */
  async function startChild(): Promise<{ child: ChildProcess; url: string; key: string }> {
    return startPitrChild({ dataDir: childDataDir, databaseUrl: target.url, job: { id: JOB, name: `takeover ${SUFFIX}`, source: source(), destination } });
  }

  /** The second process: in this one, over the same state database, with its own data directory. */
  async function startServer(): Promise<PitrServer> {
    const catalog = new InMemoryJobCatalog();
    catalog.addConfig({ configId: 'pg', name: 'Takeover cluster', kind: 'source', adapterId: 'postgres', config: source() });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    catalog.addJob({ id: JOB, name: `takeover ${SUFFIX}`, compression: 'ZSTD' }, 'pg', [{ configId: 'disk' }]);
    const started = await startPitrServer(target, { catalog, adapters: [sourcePostgres] as unknown as AnyAdapterDefinition[] });
    started.handle.container.register(TOKENS.LocalPathPolicy, { useValue: createLocalPathPolicy({ allowedRoots: [work, destination], protectedPaths: [target.dataDir] }) });
    key = await started.apiKey('takeover', ['history:read', 'jobs:execute', 'storage:restore']);
    return started;
  }

  /** Ends the segment being written; waits until it is archived complete and the window reaches `lastCommit`. */
  async function settled(lastCommit: number): Promise<any> {
    const [{ segment } = { segment: '' }] = await cluster.sql<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment');
    await until(`segment ${segment} archived complete`, async () => (await server!.changeLogs.piecesOf(JOB)).some((piece) => piece.name === segment && !piece.partial), 60_000);
    return until('a window that ends after the last commit', async () => {
      const data = await pointInTime(server!.url, key);
      return data?.window && Date.parse(data.window.end) >= lastCommit ? data : undefined;
    }, 60_000);
  }

  /** Restores `latest` through the survivor's API into a served copy and returns the ids it holds. */
  async function restoreLatest(): Promise<number[]> {
    const targetPath = join(work, `restore-${randomBytes(3).toString('hex')}`);
    const servePort = await freePort();
    const reply = await call(server!.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath, servePort } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    try {
      const done = await waitForEnd(server!.url, key, reply.body.data.executionId, 150_000);
      expect(done.status, JSON.stringify(done.logs?.slice?.(-15))).toBe('Success');
      const client = new pg.Client({ host: '127.0.0.1', port: servePort, user: ROLE.user, password: ROLE.password, database: 'postgres' });
      try {
        await client.connect();
        return (await client.query<{ id: number }>('SELECT id FROM fault_rows ORDER BY id')).rows.map((row) => row.id);
      } finally {
        await client.end().catch(() => undefined);
      }
    } finally {
      await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', targetPath, 'stop', '-m', 'fast']).catch(() => undefined);
      await rm(targetPath, { recursive: true, force: true });
    }
  }
});

async function pointInTime(url: string, key: string): Promise<any> {
  const reply = await call(url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
  return reply.status === 200 ? reply.body.data : undefined;
}
