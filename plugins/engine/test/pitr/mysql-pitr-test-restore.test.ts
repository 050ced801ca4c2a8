// Issue 44 scope 4: a MySQL/MariaDB point-in-time job's test restore rebuilds every database of the base backup as of a
// random instant of the recoverable window in throwaway databases (`hf_testrestore_<tag>_<n>`) on the `database`
// target's server, checks them, and drops them whatever happened. Real everything: the MariaDB PITR test server
// (127.0.0.1:3307, binary logging on), the MySQL source in point-in-time mode with a 1 s flush, a local destination.
// A writer inserts one row about every 100 ms after the base backup, each storing its statement's NOW() (the second
// its binary log events carry); the run reports every restored table's row count read before the drop, which must
// be exactly the writer's rows before the target's second (a time target T replays every transaction that began
// before T's second and none from it on): a restore to the wrong point, or of the wrong rows, fails the test. The
// `sourceId` case uses a separate throwaway MariaDB of the test's own (mysql-fault-server.ts) as the scratch server.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourceMysql from '@holdfast/source-mysql';
import { silentLogger, TOKENS, type AnyAdapterDefinition } from '@holdfast/kernel';
import { ORM_DATABASE } from '@holdfast/orm-port';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../../src/index.js';
import type { PointTestRestoreMetadata } from '../../src/pitr/test-restore/point-test-restore-run.js';
import { ExecutionEntity } from '../../src/store/entities.js';
import { parseMetadata } from '../../src/store/metadata.js';
import { scratchTag } from '../../src/test-restore/scratch-targets.js';
import { TestRestoreScheduler } from '../../src/test-restore/test-restore-scheduler.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { OwnMariadb } from './mysql-fault-server.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin' | 'binlog', { user: string; password: string }> };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mypitrtr${SUFFIX}`;
/** The test's database (the job backs up only this one). */
const DB = `hf_pitr_tr_${SUFFIX}`;
/** Rows of padding, so that loading the base takes long enough for the cancel test to land in the middle of it. */
const BULK_ROWS = 60_000;
const SEEDED = 5;
const WRITE_FOR_MS = 12_000;
const WRITE_EVERY_MS = 100;
/** A schedule that exists but does not fire during the test: the test fires it itself, as the cron would. */
const SCHEDULE = '0 5 1 1 *';

/** An administrator connection (UTC session). */
const connect = (database?: string) => mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password, database, timezone: 'Z', dateStrings: true });

describe('MySQL/MariaDB point-in-time test restores (issue 44 scope 4)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let store: ExecutionStore;
  let key: string;
  let dir: string;
  let admin: mysql.Connection;
  /** The `second` (UNIX time of NOW()) of every row the writer inserted after the base backup. */
  let writes: number[] = [];
  let firstRun: string | undefined;
  let scratchServer: OwnMariadb | undefined;

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, at DATETIME NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE TABLE \`${DB}\`.bulk (id INT PRIMARY KEY, pad VARCHAR(255) NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE DATABASE \`${DB}_nudge\``);
    await admin.query(`CREATE TABLE \`${DB}_nudge\`.ticks (at DATETIME(6) NOT NULL)`);
    // MariaDB's SEQUENCE engine: the rows are made by the server, in one statement (before the stream starts).
    await admin.query(`INSERT INTO \`${DB}\`.bulk SELECT seq, REPEAT('x', 200) FROM \`${DB}\`.seq_1_to_${BULK_ROWS}`);
    dir = await mkdtemp(join(tmpdir(), 'hf-mysql-pitr-tr-'));
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    store = new ExecutionStore(server.handle.container.resolve(ORM_DATABASE));
    const { user, password } = mariadb.users.admin;
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 } });
    // A separate server of the test's own (logical-mode configuration) as the scratch server named by sourceId.
    scratchServer = await OwnMariadb.create({ user: 'holdfast_scratch', password: randomBytes(12).toString('hex') });
    server.catalog.addConfig({ configId: 'mariadb-scratch', name: 'MariaDB scratch', kind: 'source', adapterId: 'mysql', config: { host: '127.0.0.1', port: scratchServer.port, ...scratchServer.admin, tls: 'disable' } });
    // The streaming account as a scratch server: it may not replay a binary log (no BINLOG REPLAY), so a restore there is refused.
    server.catalog.addConfig({ configId: 'mariadb-norights', name: 'MariaDB streaming account', kind: 'source', adapterId: 'mysql', config: { host: mariadb.host, port: mariadb.port, ...mariadb.users.binlog, tls: 'disable' } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    key = await server.apiKey('mysql-pitr-test-restore', ['history:read', 'jobs:read', 'jobs:execute']);
    addJob({ target: { type: 'database' } });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (admin) {
      // The test's database and any scratch database of this test's runs, whatever happened.
      for (const name of await databases(DB)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      for (const name of await databases('hf_testrestore_')) if (name.includes(SUFFIX) || leftovers.has(name)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      await admin.end().catch(() => undefined);
    }
    await scratchServer?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  /** Scratch-like names this test created by hand, dropped at the end whatever happened. */
  const leftovers = new Set<string>();

  function addJob(testRestore: unknown): void {
    server.catalog.addJob({ id: JOB, name: `mysql pitr test restore ${SUFFIX}`, databases: [DB], testRestore: testRestore as never }, 'mariadb', [{ configId: 'disk' }]);
  }

  /** Databases whose name starts with `prefix` (compared in JavaScript: `_` is a LIKE wildcard). */
  async function databases(prefix: string): Promise<string[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW DATABASES');
    return rows.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(prefix));
  }

  const scratchOf = (executionId: string) => databases(`hf_testrestore_${scratchTag(executionId)}_`);

  async function testRestore(): Promise<string> {
    const reply = await call(server.url, 'POST', `/api/jobs/${JOB}/test-restore`, { key });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.executionId as string;
  }

  async function recordOf(executionId: string): Promise<PointTestRestoreMetadata> {
    return parseMetadata((await store.get(executionId))!.metadata).testRestore as PointTestRestoreMetadata;
  }

  it('restores a random instant of the window into a scratch database whose rows equal the writer\'s at the target, then drops it', async () => {
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    // The stream starts with the server's current binary log file: the base is taken once something is archived.
    const seeder = await connect(DB);
    for (let id = 1; id <= SEEDED; id++) await seeder.query('INSERT INTO items VALUES (?, NOW())', [id]);
    await seeder.end();
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
    // No write shares a second with the base's snapshot: the state at any target is then the writer's alone.
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    writes = await writeRows();
    const writerEnded = Date.now();
    // A partial is archived only after the binary log grew: on a quiet server the window would end before the last
    // write until someone writes. A side database's table (not the job's) is written meanwhile.
    let nudged = 0;
    const window = await until(
      'a window that ends after the last write',
      async () => {
        if (Date.now() - nudged > 500) {
          nudged = Date.now();
          await admin.query(`INSERT INTO \`${DB}_nudge\`.ticks VALUES (NOW(6))`);
        }
        const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
        const found = reply.body?.data?.window;
        return found && Date.parse(found.end) >= writerEnded ? (found as { start: string; end: string }) : undefined;
      },
      60_000,
    ).then((found) => found!);

    const executionId = await testRestore();
    firstRun = executionId;
    const done = await waitForEnd(server.url, key, executionId, 180_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Success');
    const record = await recordOf(executionId);
    const point = record.pointInTime!;
    console.info(`mysql pitr test restore: ${JSON.stringify({ ...point, durationMs: record.durationMs, checks: record.checks })}`);

    // The target is an instant of the window the run saw, which is the window of this test's base.
    const targetMs = Date.parse(point.target);
    expect(point.window.start).toBe(window.start);
    expect(Date.parse(point.window.end)).toBeGreaterThanOrEqual(Date.parse(window.end));
    expect(targetMs).toBeGreaterThanOrEqual(Date.parse(point.window.start));
    expect(targetMs).toBeLessThanOrEqual(Date.parse(point.window.end));
    expect(point.baseExecutionId).toBe(base.body.executionId);
    expect(point.replayedTo).toBe('time');

    // What the scratch database held at the target, read by the run before it dropped it, against the writer's record.
    const targetSecond = Math.floor(targetMs / 1000);
    const before = writes.filter((second) => second < targetSecond);
    const restored = point.databases?.find((database) => database.name === DB);
    expect(restored, JSON.stringify(point)).toBeDefined();
    expect(restored!.into).toBe(`hf_testrestore_${scratchTag(executionId)}_0`);
    expect(restored!.tables, `target ${point.target}; writes at ${JSON.stringify(writes)}`).toEqual({ items: SEEDED + before.length, bulk: BULK_ROWS });
    const expectedRecovered = before.length > 0 ? new Date(Math.max(...before) * 1000).toISOString() : null;
    expect(restored!.recoveredTo).toBe(expectedRecovered);
    expect(point.recoveredTo).toBe(expectedRecovered);
    if (expectedRecovered) expect(point.differenceSeconds).toBe((targetMs - Date.parse(expectedRecovered)) / 1000);
    expect(point.restoreSeconds).toBeGreaterThan(0);
    expect(record.checks.every((check) => check.ok), JSON.stringify(record.checks)).toBe(true);
    expect(record.checks.map((check) => check.name)).toEqual([`${DB}: recovery point`, `${DB}: restored database`, `${DB}: tables present`, `${DB}: row counts`]);
    expect(logs).toContain(`point-in-time test restore of job \\"mysql pitr test restore ${SUFFIX}\\" to ${point.target}`);

    // Nothing is left on the server, and the original is untouched.
    expect(record.scratchRemoved).toBe(true);
    expect(await scratchOf(executionId)).toEqual([]);
    const [count] = await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${DB}\`.items`);
    expect(Number(count[0]!.n)).toBe(SEEDED + writes.length);
  }, 300_000);

  it('a cancelled test restore leaves no scratch database; one a crashed run of the job left is swept first, others are not', async () => {
    expect(firstRun, 'the first test ran').toBeDefined();
    // As if the first run had crashed with its scratch database still there (its execution has ended), and a name of
    // the same form whose execution this installation does not know (another installation's: never touched).
    const crashed = `hf_testrestore_${scratchTag(firstRun!)}_0`;
    const foreign = `hf_testrestore_${randomBytes(6).toString('hex')}_0`;
    for (const name of [crashed, foreign]) {
      leftovers.add(name);
      await admin.query(`CREATE DATABASE \`${name}\``);
    }

    const executionId = await testRestore();
    // The scratch database appears while the base loads (60 000 rows of padding): cancel then.
    await until('the scratch database of the run', async () => (await scratchOf(executionId)).length > 0, 60_000);
    const cancel = await call(server.url, 'POST', `/api/executions/${executionId}/cancel`, { key });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    const done = await waitForEnd(server.url, key, executionId, 120_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Cancelled');
    expect(await scratchOf(executionId)).toEqual([]);
    expect((await recordOf(executionId)).scratchRemoved).toBe(true);
    expect(logs).toContain(`dropped database ${crashed} on MariaDB PITR left by an interrupted test restore`);
    expect(await databases(crashed)).toEqual([]);
    expect(await databases(foreign)).toEqual([foreign]);
  }, 180_000);

  it('restores into a separate server (sourceId) when the schedule fires, never touching the job\'s own, and drops it there', async () => {
    addJob({ target: { type: 'database', sourceId: 'mariadb-scratch' }, schedule: SCHEDULE });
    const executionId = await fireSchedule();
    // Where the scratch database shows up while the run goes on: on the separate server, never on production.
    const name = `hf_testrestore_${scratchTag(executionId)}_0`;
    const seen = { production: false, separate: false };
    let isRunning = true;
    const watching = (async () => {
      while (isRunning) {
        if ((await databases(name)).length > 0) seen.production = true;
        if ((await scratchServer!.sql<{ name: string }>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length > 0) seen.separate = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const done = await waitForEnd(server.url, key, executionId, 180_000).finally(() => (isRunning = false));
    await watching;
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Success');
    expect(seen).toEqual({ production: false, separate: true });
    const record = await recordOf(executionId);
    expect(record.target).toBe(`database ${name} on MariaDB scratch (127.0.0.1:${scratchServer!.port})`);
    const restored = record.pointInTime!.databases![0]!;
    const targetSecond = Math.floor(Date.parse(record.pointInTime!.target) / 1000);
    expect(restored.tables).toEqual({ items: SEEDED + writes.filter((second) => second < targetSecond).length, bulk: BULK_ROWS });
    expect(await scratchServer!.sql('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).toEqual([]);
  }, 180_000);

  it('fails, leaving no scratch database, when the scratch server refuses the restore', async () => {
    addJob({ target: { type: 'database', sourceId: 'mariadb-norights' } });
    const executionId = await testRestore();
    const done = await waitForEnd(server.url, key, executionId, 120_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Failed');
    expect(logs).toContain(`account ${mariadb.users.binlog.user} may not replay a binary log`);
    expect(await scratchOf(executionId)).toEqual([]);
    expect((await recordOf(executionId)).scratchRemoved).toBe(true);
  }, 120_000);

  it('refuses a directory target on a MySQL point-in-time job (422), queueing nothing', async () => {
    addJob({ target: { type: 'directory', path: dir } });
    const before = await store.em().count(ExecutionEntity, {});
    const reply = await call(server.url, 'POST', `/api/jobs/${JOB}/test-restore`, { key });
    expect(reply.status).toBe(422);
    expect(reply.body.error).toContain(`job "mysql pitr test restore ${SUFFIX}" is a MySQL/MariaDB point-in-time job: its test restore rebuilds each database of the base backup in a throwaway database`);
    expect(reply.body.error).toContain('not directory');
    expect(await store.em().count(ExecutionEntity, {})).toBe(before);
  });

  /** Plans the job's test restore schedule and fires it (what the cron does at the scheduled minute). */
  async function fireSchedule(): Promise<string> {
    const planner = new TestRestoreScheduler({
      catalog: () => server.catalog,
      settings: () => server.settings,
      store,
      enqueue: (jobId, trigger) => server.engine().enqueueTestRestore(jobId, trigger),
      isLeader: () => true,
      logger: silentLogger,
      events: server.handle.container.resolve(TOKENS.EventBus),
    });
    try {
      await planner.reload();
      expect(planner.plan().find((entry) => entry.jobId === JOB)?.schedule).toBe(SCHEDULE);
      const executionId = await planner.tick(JOB);
      expect(executionId).toBeTruthy();
      return executionId!;
    } finally {
      await planner.stop();
    }
  }

  /** Writes one row about every {@link WRITE_EVERY_MS} for {@link WRITE_FOR_MS}; answers each row's NOW() second. */
  async function writeRows(): Promise<number[]> {
    const writer = await connect(DB);
    const seconds: number[] = [];
    try {
      const end = Date.now() + WRITE_FOR_MS;
      for (let id = SEEDED + 1; Date.now() < end; id++) {
        await writer.query('INSERT INTO items VALUES (?, NOW())', [id]);
        const [rows] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(at) AS second FROM items WHERE id = ?', [id]);
        seconds.push(Number(rows[0]!.second));
        await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    return seconds;
  }
});
