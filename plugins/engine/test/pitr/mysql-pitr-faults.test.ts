// Issue 44 acceptance 2, at the engine level with real processes: a throwaway MariaDB of this file (the shared PITR
// server on 3307 serves other suites at the same time and must not be restarted or purged), the MySQL source in
// point-in-time mode, a local destination and libsql state, so a restarted Holdfast finds what the killed one left.
//   1. SIGKILL of the Holdfast process (a child, mysql-fault-child.mjs) while the binary log streams and a writer
//      commits: the next process stops the mariadb-binlog the killed one left, resumes the stream, the archive has no
//      gap, the window runs on from before the kill, and a restore to `latest` holds every committed row.
//   2. MariaDB restarted mid-stream: the stream resumes, no gap, rows of after the restart are restored.
//   3. PURGE BINARY LOGS past the stream's position while Holdfast is stopped: a pitr_gap event, the gap in
//      GET /api/jobs/:id/point-in-time, and after a new base backup a restore to a second after it is exact.
// The cases run in order on one server, one job and one state directory, as one installation would live through them.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourceMysql from '@holdfast/source-mysql';
import { createLocalPathPolicy, TOKENS, type AnyAdapterDefinition, type RunPlan } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryJobCatalog } from '../support/doubles.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { sleep } from './fault-cluster.js';
import { binlogReadersOf, MysqlWriter, OwnMariadb } from './mysql-fault-server.js';
import { startPitrChild } from './pitr-child-process.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mysqlfault${SUFFIX}`;
const DB = 'hf_faults';
const ADMIN = { user: 'holdfast_fault', password: randomBytes(12).toString('hex') };
/** Ids of rows written by the test itself (not the writer) while Holdfast is stopped in case 3. */
const EXTRA_ID = 1_000_000;

/** A row as stored: `at` is the NOW() of its INSERT (UTC, whole seconds), `second` the same as a Unix second. */
interface Row {
  id: number;
  at: string;
}

describe('MySQL/MariaDB point-in-time recovery under faults: SIGKILL, MariaDB restart, purged binary logs (issue 44 acceptance 2)', () => {
  let mariadb: OwnMariadb;
  let writer: MysqlWriter;
  let target: TestDatabaseTarget;
  let destination: string;
  let spoolDir: string;
  let child: ChildProcess | undefined;
  let server: PitrServer | undefined;
  let key: string;
  let restores = 0;
  /** The window after case 1's base backup: cases 1 and 2 must keep its start. */
  let firstWindow: { start: string; baseExecutionId: string } | undefined;
  const source = () => ({ mode: 'point-in-time', host: '127.0.0.1', port: mariadb.port, user: ADMIN.user, password: ADMIN.password, tls: 'disable', binlogFlushIntervalSeconds: 1 });

  beforeAll(async () => {
    mariadb = await OwnMariadb.create(ADMIN);
    await mariadb.sql(`CREATE DATABASE ${DB}`);
    await mariadb.sql(`CREATE TABLE ${DB}.fault_rows (id INT PRIMARY KEY, at DATETIME NOT NULL) ENGINE=InnoDB`);
    writer = new MysqlWriter(mariadb, DB);
    target = await createTarget('sqlite');
    spoolDir = join(target.dataDir, 'pitr-spool', JOB);
    destination = await mkdtemp(join(tmpdir(), 'hf-mysql-faults-dest-'));
  }, 120_000);

  afterAll(async () => {
    await writer?.stop().catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close().catch(() => undefined);
    // A mariadb-binlog the killed child left behind (the stream ends it; without that, it would outlive the test).
    for (const reader of await binlogReadersOf(spoolDir ?? '/nonexistent').catch(() => [])) {
      try {
        process.kill(reader.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // The whole server goes, and the restored databases with it.
    await mariadb?.remove();
    if (destination) await rm(destination, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('SIGKILL while the binary log streams: the restarted process resumes with one reader, no gap, the window runs on, every row restores', async () => {
    const first = await startPitrChild({ dataDir: target.dataDir, job: { sourceAdapter: 'mysql', id: JOB, name: `mysql faults ${SUFFIX}`, source: source(), databases: [DB], destination } });
    child = first.child;
    await until('the child streaming', async () => (await pointInTime(first.url, first.key))?.streaming?.state === 'streaming', 60_000);
    // The stream starts with the server's current file: the base's coordinates must lie in what it archives.
    writer.start();
    await until('a first archived piece', async () => (await pointInTime(first.url, first.key))?.segments > 0, 30_000);
    const base = await call(first.url, 'POST', `/api/jobs/${JOB}/run`, { key: first.key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(first.url, first.key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs?.slice?.(-10))).toBe('Success');

    const baseEnded = Date.now();
    const before = await until(
      'a window that reaches after the base',
      async () => {
        const data = await pointInTime(first.url, first.key);
        return data?.window && Date.parse(data.window.end) > baseEnded + 1_000 ? data : undefined;
      },
      30_000,
    );
    expect(before.gaps).toEqual([]);
    firstWindow = { start: before.window.start, baseExecutionId: before.window.baseExecutionId };
    expect((await binlogReadersOf(spoolDir)).map((reader) => reader.ppid)).toEqual([first.child.pid]);
    expect(await mariadb.binlogDumps()).toBe(1);

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    // The killed process's mariadb-binlog outlives it (no shutdown hook ran), still writing into the spool.
    const orphans = await binlogReadersOf(spoolDir);
    expect(orphans, 'test setup: the killed process left its reader behind').toHaveLength(1);
    // Rows committed while no Holdfast runs, over two rotations: a restart that did not resume from the spool's
    // position (but began again with the server's newest file) would miss the files completed meanwhile.
    const filesAtKill = await mariadb.binlogs();
    for (let round = 0; round < 2; round++) {
      await sleep(1_000);
      await mariadb.sql('FLUSH BINARY LOGS');
    }
    expect((await mariadb.binlogs()).length).toBe(filesAtKill.length + 2);

    server = await startServer();
    const readers = (await until('one mariadb-binlog, the restarted process\'s', async () => {
      const found = await binlogReadersOf(spoolDir);
      return found.length === 1 && found[0]!.ppid === process.pid ? found : undefined;
    }, 30_000))!;
    expect(readers[0]!.pid).not.toBe(orphans[0]!.pid);
    await until('one replica connection on the server', async () => (await mariadb.binlogDumps()) === 1, 30_000);

    await sleep(3_000);
    const last = await writer.stop();
    expect(writer.commits.filter((commit) => commit.clientAfter > killedAt + 500).length).toBeGreaterThan(10);
    const after = await settled(last.clientAfter);
    expect(after.gaps).toEqual([]);
    expect(after.window.start).toBe(firstWindow.start);
    expect(after.window.baseExecutionId).toBe(firstWindow.baseExecutionId);
    expect(after.streaming.state).toBe('streaming');
    expect(await binlogReadersOf(spoolDir)).toHaveLength(1);

    const restored = await restore({ type: 'latest' });
    expect(restored).toEqual(await rowsOf(DB));
    expect(restored.map((row) => row.id).filter((id) => !writer.uncertain.has(id))).toEqual(writer.commits.map((commit) => commit.id));
  }, 240_000);

  it('MariaDB restarted mid-stream: the stream resumes, no gap, rows after the restart restore', async () => {
    expect(server, 'case 1 left a running server').toBeDefined();
    writer.start();
    await sleep(2_000);
    const filesBefore = await mariadb.binlogs();
    await mariadb.restart();
    const restartedAt = Date.now();
    // A restart closes the binary log file and opens a new one.
    expect((await mariadb.binlogs()).length).toBeGreaterThan(filesBefore.length);
    await until('the stream reading again after the restart', async () => (await mariadb.binlogDumps()) === 1, 60_000);
    await sleep(3_000);
    const last = await writer.stop();
    expect(writer.commits.filter((commit) => commit.clientAfter > restartedAt + 500).length).toBeGreaterThan(10);

    const after = await settled(last.clientAfter);
    expect(after.gaps).toEqual([]);
    expect(after.window.start).toBe(firstWindow!.start);
    expect(after.streaming.state).toBe('streaming');

    const restored = await restore({ type: 'latest' });
    expect(restored).toEqual(await rowsOf(DB));
    const ids = restored.map((row) => row.id);
    for (const commit of writer.commits) expect(ids).toContain(commit.id);
    // Nothing the writer never attempted.
    expect(ids.every((id) => writer.commits.some((commit) => commit.id === id) || writer.uncertain.has(id))).toBe(true);
  }, 240_000);

  it('binary logs purged past the stream while Holdfast is stopped: pitr_gap, the gap in the window, a new base backup restores after it exactly', async () => {
    expect(server, 'case 1 left a running server').toBeDefined();
    writer.start();
    await sleep(1_500);
    await writer.stop();
    await server!.close();
    server = undefined;
    await until('the stream\'s mariadb-binlog ended', async () => (await binlogReadersOf(spoolDir)).length === 0, 20_000);
    const inSpool = (await readdir(spoolDir)).filter((name) => /^mysql-bin\.\d+$/.test(name));
    expect(inSpool, 'test setup: the spool holds the file it was writing').toHaveLength(1);
    const reached = inSpool[0]!;

    // New files, each with a row of its own, then everything before the newest purged: the stream's file is gone.
    for (let round = 0; round < 3; round++) {
      await mariadb.sql(`INSERT INTO ${DB}.fault_rows VALUES (?, NOW())`, [EXTRA_ID + round]);
      await mariadb.sql('FLUSH BINARY LOGS');
    }
    // The server notices the stopped reader's connection is gone when it sends it the new events; until then
    // PURGE keeps the file that connection reads.
    await until('the server\'s replica connection gone', async () => (await mariadb.binlogDumps()) === 0, 20_000);
    const newest = (await mariadb.binlogs()).at(-1)!;
    // MariaDB also keeps a file until its binlog checkpoint passed it (InnoDB has the file's commits durably): asked again.
    await until('every file but the newest purged', async () => {
      await mariadb.sql(`PURGE BINARY LOGS TO '${newest}'`);
      return (await mariadb.binlogs()).join() === newest;
    }, 20_000);
    expect(newest > reached).toBe(true);

    const events: Array<{ name: string; payload: Record<string, unknown> }> = [];
    server = await startServer({
      beforeRelease: (started) => {
        const bus = started.handle.container.resolve(TOKENS.EventBus);
        for (const name of ['pitr_gap', 'pitr_stream_stopped'] as const) bus.on(name, (payload) => void events.push({ name, payload: payload as unknown as Record<string, unknown> }));
      },
    });
    const gap = (await until('a pitr_gap event', () => events.find((event) => event.name === 'pitr_gap'), 60_000))!;
    expect(gap.payload).toMatchObject({ jobId: JOB, lastArchived: reached, nextAvailable: newest });
    expect(String(gap.payload.message)).toContain('the archive has a gap');
    expect(String(gap.payload.message)).toContain(`${reached} (received only in part) up to ${newest}`);
    expect(events.filter((event) => event.name === 'pitr_stream_stopped')).toEqual([]);

    // The window API shows the gap, between the file the stream had reached and the oldest the server still had.
    const shown = await until('the gap in the window', async () => {
      const data = await pointInTime(server!.url, key);
      return data?.gaps?.length > 0 ? data : undefined;
    }, 30_000);
    expect(shown.gaps).toHaveLength(1);
    // The window counts a file archived only in part as missing (its tail never arrived): the gap begins after the
    // newest completed file, before the one the event names as received in part.
    const fileNumber = (name: string) => Number(name.slice(name.lastIndexOf('.') + 1));
    expect(shown.gaps[0].next).toBe(newest);
    expect(fileNumber(shown.gaps[0].after)).toBe(fileNumber(reached) - 1);
    expect(shown.gaps[0].missing).toBe(fileNumber(newest) - fileNumber(reached));
    // The base before the gap reaches no instant after it: no window until a new base.
    expect(shown.window).toBeNull();

    writer.start();
    await sleep(1_500);
    const base = await call(server!.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server!.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs?.slice?.(-10))).toBe('Success');
    await sleep(4_000);
    const last = await writer.stop();
    const after = await settled(last.clientAfter);
    expect(after.window.baseExecutionId).toBe(base.body.executionId);
    expect(Date.parse(after.window.start)).toBeGreaterThan(Date.parse(firstWindow!.start));
    expect(after.gaps).toEqual(shown.gaps);

    // A whole second after the new base's consistency point with rows on both sides: a time target replays the
    // transactions of before its second and none from it on (docs/pitr.md), so the expected state is exact.
    const rows = await rowsOf(DB);
    const secondOf = (row: Row) => Date.parse(`${row.at.replace(' ', 'T')}Z`) / 1000;
    const seconds = [...new Set(rows.map(secondOf))].filter((second) => second * 1000 > Date.parse(after.window.start) + 1_000 && second <= Math.max(...rows.map(secondOf)));
    expect(seconds.length).toBeGreaterThan(1);
    const instant = seconds[Math.floor(seconds.length / 2)]!;
    const restored = await restore({ type: 'time', time: new Date(instant * 1000).toISOString() });
    const expected = rows.filter((row) => secondOf(row) < instant);
    expect(restored).toEqual(expected);
    expect(restored.length).toBeLessThan(rows.length);
    // The rows written around the purge are in the new base.
    expect(restored.filter((row) => row.id >= EXTRA_ID).map((row) => row.id)).toEqual([EXTRA_ID, EXTRA_ID + 1, EXTRA_ID + 2]);
  }, 240_000);

  /** An in-process server on the same state directory and job; `beforeRelease` runs before the job resolves. */
  async function startServer(options: { beforeRelease?: (server: PitrServer) => void } = {}): Promise<PitrServer> {
    const catalog = new HeldCatalog();
    catalog.addConfig({ configId: 'mariadb', name: 'Fault MariaDB', kind: 'source', adapterId: 'mysql', config: source() });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    catalog.addJob({ id: JOB, name: `mysql faults ${SUFFIX}`, compression: 'ZSTD', databases: [DB] }, 'mariadb', [{ configId: 'disk' }]);
    const started = await startPitrServer(target, { catalog, adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    started.handle.container.register(TOKENS.LocalPathPolicy, { useValue: createLocalPathPolicy({ allowedRoots: [destination], protectedPaths: [target.dataDir] }) });
    key = await started.apiKey('mysql-faults', ['history:read', 'jobs:execute', 'storage:restore']);
    options.beforeRelease?.(started);
    catalog.isHeld = false;
    return started;
  }

  /** Rotates the binary log (the file being written is archived complete) and waits for a window reaching `lastCommit`. */
  async function settled(lastCommit: number): Promise<any> {
    await mariadb.sql('FLUSH BINARY LOGS');
    return until(
      'a window that ends after the last commit',
      async () => {
        const data = await pointInTime(server!.url, key);
        return data?.window && Date.parse(data.window.end) >= lastCommit ? data : undefined;
      },
      60_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; point-in-time: ${JSON.stringify(await pointInTime(server!.url, key))}`);
    });
  }

  /** Restores `restoreTarget` through the API into a new database and returns its rows. */
  async function restore(restoreTarget: Record<string, unknown>): Promise<Row[]> {
    const into = `${DB}_r${++restores}`;
    const reply = await call(server!.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: restoreTarget, database: DB, targetDatabase: into } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server!.url, key, reply.body.data.executionId, 120_000);
    expect(done.status, JSON.stringify(done.logs?.slice?.(-15))).toBe('Success');
    try {
      return await rowsOf(into);
    } finally {
      await mariadb.sql(`DROP DATABASE IF EXISTS \`${into}\``);
    }
  }

  async function rowsOf(database: string): Promise<Row[]> {
    const rows = await mariadb.sql<{ id: number; at: string }>(`SELECT id, at FROM \`${database}\`.fault_rows ORDER BY id`);
    return rows.map((row) => ({ id: Number(row.id), at: String(row.at) }));
  }
});

/**
 * The job's plan does not resolve until the test lets it (the supervisor skips a job that does not resolve): the
 * supervisor's first pass runs while the server boots, before the test could listen to its events.
 */
class HeldCatalog extends InMemoryJobCatalog {
  isHeld = true;

  override async resolveRunPlan(jobId: string): Promise<RunPlan> {
    if (this.isHeld) throw new Error('held back by the test');
    return super.resolveRunPlan(jobId);
  }
}

async function pointInTime(url: string, key: string): Promise<any> {
  const reply = await call(url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
  return reply.status === 200 ? reply.body.data : undefined;
}
