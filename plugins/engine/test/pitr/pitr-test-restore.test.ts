// Issue 43 scope 6 / acceptance 6: a point-in-time job's scheduled test restore restores its cluster to a random
// instant of the recoverable window into a throwaway folder, serves it on a free port, checks it through the job's
// own source, stops it, removes the folder, and records the restore time, the target and the recovered point.
// Real everything: the PITR test cluster (PostgreSQL 15 on 127.0.0.1:5433), the physical-mode PostgreSQL source with
// a 1 s WAL flush, a local destination. A writer commits about every 100 ms from before the base backup until the
// test restore ended, so every instant of the window has a commit of the test shortly before it.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourcePostgres from '@holdfast/source-postgres';
import { silentLogger, TOKENS, type AnyAdapterDefinition } from '@holdfast/kernel';
import { ORM_DATABASE } from '@holdfast/orm-port';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../../src/index.js';
import type { PointTestRestoreMetadata } from '../../src/pitr/test-restore/point-test-restore-run.js';
import { parseMetadata } from '../../src/store/metadata.js';
import { TestRestoreScheduler } from '../../src/test-restore/test-restore-scheduler.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const pitr = JSON.parse(await readFile(`${SERVICES}/postgres-pitr/postgres-pitr.json`, 'utf8')) as { host: string; port: number; roles: Record<string, { user: string; password: string }> };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `pitrtr${SUFFIX}`;
const NO_WINDOW = `pitrtrnowin${SUFFIX}`;
const TABLE = `pitr_tr_${SUFFIX}`;
/** A schedule that exists but does not fire during the test: the test fires it itself, as the cron would. */
const SCHEDULE = '0 5 1 1 *';

interface Commit {
  id: number;
  /** The server's clock inside the insert (before the commit). */
  serverAt: number;
  /** The client's clock once COMMIT returned (after the commit). */
  clientAfter: number;
}

const adminClient = () => new pg.Client({ host: `${SERVICES}/postgres-pitr`, port: pitr.port, user: 'postgres', database: 'postgres' });

describe('point-in-time test restores (issue 43 acceptance 6)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let store: ExecutionStore;
  let key: string;
  let work: string;
  let scratchParent: string;
  const admin = adminClient();

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, committed_at timestamptz NOT NULL)`);
    // The restored server runs as `postgres` (the test runs as root): it must be able to enter the scratch's parent.
    work = await mkdtemp(join(tmpdir(), 'hf-pitr-tr-'));
    await chmod(work, 0o755);
    scratchParent = join(work, 'scratch');
    await mkdir(scratchParent, { mode: 0o755 });
    await mkdir(join(work, 'destination'));

    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourcePostgres] as unknown as AnyAdapterDefinition[] });
    store = new ExecutionStore(server.handle.container.resolve(ORM_DATABASE));
    const repl = pitr.roles.repl!;
    server.catalog.addConfig({ configId: 'pg', name: 'PITR cluster', kind: 'source', adapterId: 'postgres', config: { mode: 'physical', host: '127.0.0.1', port: pitr.port, user: repl.user, password: repl.password, walFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: join(work, 'destination') } });
    // A point-in-time source with no log at all (the test double streams nothing unless told): no window, ever.
    server.catalog.addConfig({ configId: 'empty', name: 'Empty PITR double', kind: 'source', adapterId: 'pitr-double', config: { pointInTime: true } });
    key = await server.apiKey('pitr-test-restore', ['history:read', 'jobs:read', 'jobs:execute']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    // The shared cluster must not keep a slot of this test, whatever happened (see pitr-end-to-end.test.ts).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await admin.query(`SELECT slot_name, active FROM pg_replication_slots WHERE slot_name LIKE $1`, [`%${SUFFIX}%`]).catch(() => ({ rows: [] as Array<{ slot_name: string; active: boolean }> }));
      for (const row of rows.filter((slot) => !slot.active)) await admin.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]).catch(() => undefined);
      if (rows.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  function scheduler(): TestRestoreScheduler {
    return new TestRestoreScheduler({
      catalog: () => server.catalog,
      settings: () => server.settings,
      store,
      enqueue: (jobId, trigger) => server.engine().enqueueTestRestore(jobId, trigger),
      isLeader: () => true,
      logger: silentLogger,
      events: server.handle.container.resolve(TOKENS.EventBus),
    });
  }

  /** Plans the job's test restore schedule and fires it (what the cron does at the scheduled minute). */
  async function fireSchedule(jobId: string): Promise<string> {
    const planner = scheduler();
    try {
      await planner.reload();
      expect(planner.plan().find((entry) => entry.jobId === jobId)?.schedule).toBe(SCHEDULE);
      const executionId = await planner.tick(jobId);
      expect(executionId).toBeTruthy();
      return executionId!;
    } finally {
      await planner.stop();
    }
  }

  it('restores a random instant of the window, checks the served copy, records restore time and recovery point, and leaves nothing', async () => {
    server.catalog.addJob({ id: JOB, name: `pitr test restore ${SUFFIX}`, testRestore: { target: { type: 'directory', path: scratchParent }, schedule: SCHEDULE } }, 'pg', [{ configId: 'disk' }]);
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);

    const writer = startWriter();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
      expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
      const baseRun = await waitForEnd(server.url, key, base.body.executionId, 180_000);
      expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
      // A few seconds of commits after the base backup, archived.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const window = await until(
        'a window that ends after the base backup and a few seconds of commits',
        async () => {
          const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
          const found = reply.body?.data?.window;
          return found && Date.parse(found.end) - Date.parse(found.start) >= 3_000 ? found : undefined;
        },
        60_000,
      );

      const executionId = await fireSchedule(JOB);
      const done = await waitForEnd(server.url, key, executionId, 240_000);
      const logs = JSON.stringify(done.logs);
      expect(done.status, logs.slice(-3_000)).toBe('Success');
      const row = await store.get(executionId);
      expect(row?.triggerType).toBe('Scheduler');
      const record = parseMetadata(row!.metadata).testRestore as PointTestRestoreMetadata;
      const point = record.pointInTime!;
      expect(point, JSON.stringify(record)).toBeDefined();
      // The figures of this run, for the record (restore time, target, recovered point).
      console.info(`pitr test restore: ${JSON.stringify({ ...point, durationMs: record.durationMs, checks: record.checks })}`);

      // The target is an instant of the window as it stood when the test restore ran.
      const targetAt = Date.parse(point.target);
      expect(Date.parse(point.window.start)).toBe(Date.parse(window.start));
      expect(targetAt).toBeGreaterThanOrEqual(Date.parse(point.window.start));
      expect(targetAt).toBeLessThanOrEqual(Date.parse(point.window.end));
      expect(Date.parse(point.window.end)).toBeGreaterThanOrEqual(Date.parse(window.end));
      expect(['time', 'latest']).toContain(point.replayedTo);

      // The recovered point: at or before the target, and no later than the newest commit of the writer that was
      // certainly committed by then (its commit time lies between serverAt and clientAfter).
      expect(point.recoveredTo, 'recoveredTo recorded').not.toBeNull();
      const recoveredAt = Date.parse(point.recoveredTo!);
      expect(recoveredAt).toBeLessThanOrEqual(targetAt + 1);
      // Date.now() truncates to the millisecond: a commit that returned at clientAfter may have committed up to 1 ms
      // later (seen once: clientAfter equal to the target, the commit record 0.x ms after it, rightly not replayed).
      const committed = writer.commits.filter((commit) => commit.clientAfter + 1 <= targetAt);
      expect(committed.length, 'the writer committed before the target').toBeGreaterThan(0);
      expect(recoveredAt).toBeGreaterThanOrEqual(committed[committed.length - 1]!.serverAt);
      // Within the window: at its very first instant the newest commit may lie a moment before it (the writer's last
      // commit before the base backup ended), never more than a writer's pause.
      expect(recoveredAt).toBeGreaterThanOrEqual(Date.parse(point.window.start) - 1_000);
      expect(point.differenceSeconds).toBeCloseTo((targetAt - recoveredAt) / 1000, 2);
      expect(point.differenceSeconds!).toBeGreaterThanOrEqual(-0.001);
      expect(point.differenceSeconds!).toBeLessThan(5);

      // Restore time: measured, and the checks ran against the served copy.
      expect(point.restoreSeconds!).toBeGreaterThan(0);
      expect(record.durationMs!).toBeGreaterThanOrEqual(point.restoreSeconds! * 1000 - 1);
      expect(record.checks.map((check) => [check.name, check.ok])).toEqual([
        ['recovery point', true],
        ['server answers', true],
        ['databases present', true],
      ]);
      expect(record.checks.find((check) => check.name === 'server answers')!.detail).toMatch(/^15\./);
      expect(record.checks.find((check) => check.name === 'databases present')!.detail).toContain('postgres');
      expect(record.scratchRemoved).toBe(true);
      expect(record.file).toBe((await server.changeLogs.basesOf(JOB))[0]!.storageKey);
      expect(record.storageId).toBe('disk');

      // In the log, and through the restore-time route.
      expect(logs).toContain(`to ${point.target} (picked at random in the window`);
      expect(logs).toContain(`restored in ${point.restoreSeconds} s; target ${point.target}, recovered to ${point.recoveredTo}`);
      const time = await call(server.url, 'GET', `/api/jobs/${JOB}/restore-time`, { key });
      expect(time.status).toBe(200);
      expect(time.body.data).toMatchObject({
        measuredRestoreMs: record.durationMs,
        measuredExecutionId: executionId,
        recoveryPoint: { target: point.target, recoveredTo: point.recoveredTo, differenceSeconds: point.differenceSeconds, restoreSeconds: point.restoreSeconds },
      });

      // Nothing left: no scratch folder, so no data directory and no running server in it, and the served copy's
      // private socket folder (named in the source's warning) is gone too.
      expect(await readdir(scratchParent)).toEqual([]);
      const runDir = /are in (\/[^;]+holdfast-pitr-[^;\s]+); remove that folder/.exec(logs)?.[1];
      expect(runDir, 'the served copy names its socket folder').toBeDefined();
      expect(await stat(runDir!).catch(() => null)).toBeNull();
    } finally {
      await writer.stop();
    }
  }, 480_000);

  it('fails with a clear message when the job has no recoverable window, and when the target is not a folder', async () => {
    server.catalog.addJob({ id: NO_WINDOW, name: `no window ${SUFFIX}`, testRestore: { target: { type: 'directory', path: scratchParent }, schedule: SCHEDULE } }, 'empty', [{ configId: 'disk' }]);
    const noWindow = await waitForEnd(server.url, key, await fireSchedule(NO_WINDOW), 60_000);
    expect(noWindow.status).toBe('Failed');
    expect(noWindow.error).toContain(`job "no window ${SUFFIX}" has no recoverable window: a point-in-time test restore needs a base backup followed by unbroken archived log`);
    expect(await readdir(scratchParent)).toEqual([]);

    server.catalog.addJob({ id: NO_WINDOW, name: `no window ${SUFFIX}`, testRestore: { target: { type: 'database' }, schedule: SCHEDULE } }, 'empty', [{ configId: 'disk' }]);
    const wrongTarget = await waitForEnd(server.url, key, await fireSchedule(NO_WINDOW), 60_000);
    expect(wrongTarget.status).toBe('Failed');
    expect(wrongTarget.error).toContain('is a point-in-time job: its test restore rebuilds the whole cluster in a throwaway folder');
  }, 120_000);

  /** Commits one row about every 100 ms until stopped, logging each commit's clocks. */
  function startWriter(): { commits: Commit[]; stop(): Promise<void> } {
    const commits: Commit[] = [];
    const client = adminClient();
    let running = true;
    const loop = (async () => {
      await client.connect();
      for (let id = 1; running; id++) {
        const { rows } = await client.query<{ at: Date }>(`INSERT INTO ${TABLE} VALUES ($1, clock_timestamp()) RETURNING committed_at AS at`, [id]);
        commits.push({ id, serverAt: rows[0]!.at.getTime(), clientAfter: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    return {
      commits,
      stop: async () => {
        running = false;
        await loop.catch(() => undefined);
        await client.end().catch(() => undefined);
      },
    };
  }
});
