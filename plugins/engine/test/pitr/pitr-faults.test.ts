// Issue 43 acceptance 2, at the engine level with real processes: a throwaway PostgreSQL 15 cluster of this file (the
// shared PITR cluster serves other suites at the same time and must not be restarted), the physical-mode source, a
// local destination and libsql state, so a restarted Holdfast finds what the killed one left.
//   1. SIGKILL of the Holdfast process (a child, pitr-child.mjs) while WAL streams and a writer commits: the next
//      process takes the same slot over, the archive has no gap, the window runs on from before the kill, and a
//      restore to `latest` holds every committed row.
//   2. PostgreSQL restarted mid-stream (pg_ctl restart -m fast): streaming resumes, no gap, rows of after the
//      restart are restored.
//   3. The slot dropped by hand while Holdfast is stopped and the WAL it held removed by the server: pitr_slot_missing
//      and pitr_gap events, the gap in GET /api/jobs/:id/point-in-time, and a new base backup restores a time after it.
// The cases run in order on one cluster, one job and one state directory, as one installation would live through them.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourcePostgres from '@holdfast/source-postgres';
import { createLocalPathPolicy, TOKENS, type AnyAdapterDefinition, type RunPlan } from '@holdfast/kernel';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryJobCatalog } from '../support/doubles.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { asPostgres, freePort, OwnCluster, PG_BIN, receiversOf, sleep, Writer } from './fault-cluster.js';
import { startPitrChild } from './pitr-child-process.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `pitrfault${SUFFIX}`;
/** slotNameFor(JOB) of the source: the id is already lower-case letters and digits. */
const SLOT = `holdfast_${JOB}`;
const ROLE = { user: 'holdfast_fault', password: randomBytes(12).toString('hex') };

describe('point-in-time recovery under faults: SIGKILL, PostgreSQL restart, a dropped slot (issue 43 acceptance 2)', () => {
  let cluster: OwnCluster;
  let writer: Writer;
  let target: TestDatabaseTarget;
  let destination: string;
  let work: string;
  let spoolDir: string;
  let child: ChildProcess | undefined;
  let server: PitrServer | undefined;
  let key: string;
  let catalog: HeldCatalog;
  /** The window after case 1's base backup: cases 1 and 2 must keep its start. */
  let firstWindow: { start: string; baseExecutionId: string } | undefined;
  const served: string[] = [];
  const source = () => ({ mode: 'physical', host: '127.0.0.1', port: cluster.port, user: ROLE.user, password: ROLE.password, walFlushIntervalSeconds: 1 });

  beforeAll(async () => {
    cluster = await OwnCluster.create(ROLE);
    writer = new Writer(cluster);
    target = await createTarget('sqlite');
    spoolDir = join(target.dataDir, 'pitr-spool', JOB);
    destination = await mkdtemp(join(tmpdir(), 'hf-pitr-faults-dest-'));
    // Restores (and the local destination) must lie below the allowed roots; restores run the server as `postgres` (the test runs as root): it must be able to enter the targets' parent.
    work = await mkdtemp(join(tmpdir(), 'hf-pitr-faults-restore-'));
    await chmod(work, 0o755);
  }, 60_000);

  afterAll(async () => {
    await writer?.stop().catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close().catch(() => undefined);
    for (const dataDir of served) await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', dataDir, 'stop', '-m', 'immediate']).catch(() => undefined);
    // A pg_receivewal the killed child left behind (the fix ends it; without it, it would outlive the test).
    for (const receiver of await receiversOf(spoolDir ?? '/nonexistent').catch(() => [])) {
      try {
        process.kill(receiver.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    // The whole cluster goes, and its slot with it.
    await cluster?.remove();
    if (destination) await rm(destination, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('SIGKILL while WAL streams: the restarted process takes the same slot over, no gap, the window runs on, every row restores', async () => {
    const first = await startChild();
    child = first.child;
    await until('the child streaming', async () => (await pointInTime(first.url, first.key))?.streaming?.state === 'streaming', 60_000);
    const base = await call(first.url, 'POST', `/api/jobs/${JOB}/run`, { key: first.key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(first.url, first.key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs?.slice?.(-10))).toBe('Success');

    writer.start();
    await sleep(3_000);
    const before = await until(
      'a window that reaches the writer',
      async () => {
        const data = await pointInTime(first.url, first.key);
        return data?.window && Date.parse(data.window.end) > writer.commits[0]!.clientAfter ? data : undefined;
      },
      30_000,
    );
    expect(before.gaps).toEqual([]);
    firstWindow = { start: before.window.start, baseExecutionId: before.window.baseExecutionId };
    const slotBefore = await cluster.slot(SLOT);
    expect(slotBefore?.active).toBe(true);
    expect((await receiversOf(spoolDir)).map((receiver) => receiver.ppid)).toEqual([first.child.pid]);

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    // Rows committed while no Holdfast runs: the slot keeps their WAL on the server.
    await sleep(2_000);

    server = await startServer();
    // The same slot, read by a new WAL sender: the killed process's pg_receivewal (which outlived it, streaming into
    // the spool unsupervised) was ended, and the restarted process's own pg_receivewal holds the slot.
    await until(
      'the same slot active with a new WAL sender',
      async () => {
        const slot = await cluster.slot(SLOT);
        return slot?.active && slot.active_pid !== slotBefore!.active_pid;
      },
      60_000,
    );
    const receivers = await until('one pg_receivewal, the restarted process\'s', async () => {
      const found = await receiversOf(spoolDir);
      return found.length === 1 && found[0]!.ppid === process.pid ? found : undefined;
    }, 30_000);
    expect(receivers).toHaveLength(1);
    expect((await cluster.sql('SELECT count(*)::int AS n FROM pg_replication_slots')).at(0)).toEqual({ n: 1 });

    await sleep(3_000);
    const last = await writer.stop();
    expect(writer.commits.filter((commit) => commit.serverAt > killedAt).length).toBeGreaterThan(10);
    const after = await settled(last.clientAfter);
    expect(after.gaps).toEqual([]);
    expect(after.window.start).toBe(firstWindow.start);
    expect(after.window.baseExecutionId).toBe(firstWindow.baseExecutionId);
    expect(after.streaming.state).toBe('streaming');

    const rows = await restore({ type: 'latest' });
    expect(rows).toEqual(writer.commits.map((commit) => commit.id));
    expect(writer.uncertain.size).toBe(0);
  }, 240_000);

  it('PostgreSQL restarted mid-stream: streaming resumes on the same slot, no gap, rows after the restart restore', async () => {
    expect(server, 'case 1 left a running server').toBeDefined();
    writer.start();
    await sleep(2_000);
    const slotBefore = await cluster.slot(SLOT);
    expect(slotBefore?.active).toBe(true);
    const piecesBefore = await server!.changeLogs.piecesOf(JOB);
    const restartedAt = Date.now();
    await cluster.pgCtl('restart', 'fast');
    await until(
      'the slot streamed again after the restart',
      async () => {
        const slot = await cluster.slot(SLOT).catch(() => undefined);
        return slot?.active && slot.active_pid !== slotBefore!.active_pid;
      },
      60_000,
    );
    await sleep(1_500);
    // A segment completed after the restart must be archived too (not only the partial being written).
    const [{ segment: switched } = { segment: '' }] = await cluster.sql<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment');
    await sleep(2_500);
    const last = await writer.stop();
    expect(writer.commits.filter((commit) => commit.serverAt > restartedAt + 1_000).length).toBeGreaterThan(10);

    const after = await settled(last.clientAfter);
    expect(after.gaps).toEqual([]);
    expect(after.window.start).toBe(firstWindow!.start);
    expect(after.streaming.state).toBe('streaming');
    const pieces = (await until('the segment switched after the restart, archived complete', async () => {
      const all = await server!.changeLogs.piecesOf(JOB);
      return all.some((piece) => piece.name === switched && !piece.partial) ? all : undefined;
    }, 30_000))!;
    expect(pieces.filter((piece) => piece.archivedAt.getTime() > restartedAt).length).toBeGreaterThan(0);
    expect(pieces.length).toBeGreaterThan(piecesBefore.length);

    const rows = await restore({ type: 'latest' });
    const certain = writer.commits.map((commit) => commit.id);
    expect(rows.filter((id) => !writer.uncertain.has(id))).toEqual(certain);
    // Nothing the writer never attempted.
    expect(rows.every((id) => certain.includes(id) || writer.uncertain.has(id))).toBe(true);
  }, 240_000);

  it('a slot dropped by hand while Holdfast is stopped: pitr_slot_missing and pitr_gap, the gap in the window, a new base backup restores after it', async () => {
    expect(server, 'case 1 left a running server').toBeDefined();
    // Rows after case 2's last segment switch, so the spool holds a segment being written to resume from.
    writer.start();
    const partial = (await until('a segment being written in the spool', async () => (await readdir(spoolDir)).find((name) => name.endsWith('.partial'))?.slice(0, -'.partial'.length), 20_000))!;
    await writer.stop();
    await server!.close();
    server = undefined;
    await until('the slot released by the stopped stream', async () => (await cluster.slot(SLOT))?.active === false, 20_000);
    await cluster.sql('SELECT pg_drop_replication_slot($1)', [SLOT]);
    // With no slot holding it, the server recycles the WAL the stream would resume from: a segment switch and a
    // checkpoint, three times (a switch needs new WAL in the segment, hence the rows).
    for (let round = 0; round < 3; round++) {
      await cluster.sql('INSERT INTO fault_rows SELECT max(id) + 1000000, clock_timestamp() FROM fault_rows');
      await cluster.sql('SELECT pg_switch_wal()');
      await cluster.sql('CHECKPOINT');
    }
    const onServer = (await cluster.sql<{ name: string }>('SELECT name FROM pg_ls_waldir()')).map((row) => row.name);
    expect(onServer, 'test setup: the server still has the segment the spool resumes from').not.toContain(partial);
    const [{ n: extraRows } = { n: 0 }] = await cluster.sql<{ n: number }>('SELECT count(*)::int AS n FROM fault_rows WHERE id >= 1000000');
    expect(extraRows).toBe(3);

    const events: Array<{ name: string; payload: Record<string, unknown> }> = [];
    server = await startServer({
      beforeRelease: (started) => {
        const bus = started.handle.container.resolve(TOKENS.EventBus);
        for (const name of ['pitr_slot_missing', 'pitr_gap', 'pitr_stream_stopped'] as const) bus.on(name, (payload) => void events.push({ name, payload: payload as unknown as Record<string, unknown> }));
      },
    });
    const missing = (await until('a pitr_slot_missing event', () => events.find((event) => event.name === 'pitr_slot_missing'), 60_000))!;
    expect(missing.payload).toMatchObject({ jobId: JOB, slot: SLOT });
    expect(String(missing.payload.message)).toContain('dropped while the stream was stopped');
    const gap = (await until('a pitr_gap event', () => events.find((event) => event.name === 'pitr_gap'), 60_000))!;
    expect(gap.payload).toMatchObject({ jobId: JOB });
    expect(String(gap.payload.message)).toContain('the archive has a gap');
    expect(gap.payload.nextAvailable).toBeDefined();
    expect(events.filter((event) => event.name === 'pitr_stream_stopped')).toEqual([]);
    await until('the slot created again and streamed', async () => (await cluster.slot(SLOT))?.active === true, 30_000);

    // The window API shows the gap; the base backup before it reaches no instant after it: no window until a new base.
    const shown = await until('the gap in the window', async () => {
      const data = await pointInTime(server!.url, key);
      return data?.gaps?.length > 0 ? data : undefined;
    }, 30_000);
    expect(shown.window).toBeNull();
    expect(shown.gaps).toHaveLength(1);
    expect(shown.gaps[0].missing).toBeGreaterThan(0);
    if (gap.payload.lastArchived) expect(shown.gaps[0].after).toBe(gap.payload.lastArchived);
    expect(shown.gaps[0].next).toBe(gap.payload.nextAvailable);

    writer.start();
    await sleep(1_500);
    const base = await call(server!.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server!.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs?.slice?.(-10))).toBe('Success');
    await sleep(3_000);
    const last = await writer.stop();
    const after = await settled(last.clientAfter);
    expect(after.window.baseExecutionId).toBe(base.body.executionId);
    expect(Date.parse(after.window.start)).toBeGreaterThan(Date.parse(firstWindow!.start));
    expect(after.gaps).toEqual(shown.gaps);

    // An instant between two commits after the new base's consistency point.
    const start = Date.parse(after.window.start);
    const later = writer.commits.filter((commit) => commit.serverAt > start + 300);
    expect(later.length).toBeGreaterThan(10);
    const pair = later.findIndex((commit, index) => index > later.length / 2 && commit.serverAt - later[index - 1]!.clientAfter >= 20);
    expect(pair).toBeGreaterThan(0);
    const instant = Math.round((later[pair - 1]!.clientAfter + later[pair]!.serverAt) / 2);
    const rows = await restore({ type: 'time', time: new Date(instant).toISOString() });
    const expected = writer.commits.filter((commit) => commit.clientAfter <= instant).map((commit) => commit.id);
    // The rows of before the gap are in the new base; the three rows of the WAL recycling too.
    expect(rows.filter((id) => !writer.uncertain.has(id) && id < 1_000_000)).toEqual(expected);
    expect(rows.filter((id) => id >= 1_000_000)).toHaveLength(3);
    expect(rows).not.toContain(later[pair]!.id);
  }, 240_000);

  /** The child Holdfast process on this file's state directory; resolves once it printed its URL and key. */
  async function startChild(): Promise<{ child: ChildProcess; url: string; key: string }> {
    return startPitrChild({ dataDir: target.dataDir, job: { id: JOB, name: `faults ${SUFFIX}`, source: source(), destination } });
  }

  /** An in-process server on the same state directory and job; `beforeRelease` runs before the job resolves. */
  async function startServer(options: { beforeRelease?: (server: PitrServer) => void } = {}): Promise<PitrServer> {
    catalog = new HeldCatalog();
    catalog.addConfig({ configId: 'pg', name: 'Fault cluster', kind: 'source', adapterId: 'postgres', config: source() });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    catalog.addJob({ id: JOB, name: `faults ${SUFFIX}`, compression: 'ZSTD' }, 'pg', [{ configId: 'disk' }]);
    const started = await startPitrServer(target, { catalog, adapters: [sourcePostgres] as unknown as AnyAdapterDefinition[] });
    started.handle.container.register(TOKENS.LocalPathPolicy, { useValue: createLocalPathPolicy({ allowedRoots: [work, destination], protectedPaths: [target.dataDir] }) });
    key = await started.apiKey('faults', ['history:read', 'jobs:execute', 'storage:restore']);
    options.beforeRelease?.(started);
    catalog.isHeld = false;
    return started;
  }

  /**
   * Ends the segment being written and waits until it is archived complete and the window reaches `lastCommit`: then
   * every commit so far is in the archive (a partial copy taken just after the last commit could miss its last bytes).
   */
  async function settled(lastCommit: number): Promise<any> {
    const [{ segment } = { segment: '' }] = await cluster.sql<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment');
    await until(`segment ${segment} archived complete`, async () => (await server!.changeLogs.piecesOf(JOB)).some((piece) => piece.name === segment && !piece.partial), 60_000).catch(async (error: Error) => {
      const pieces = (await server!.changeLogs.piecesOf(JOB)).map((piece) => `${piece.name}${piece.partial ? ' (partial)' : ''}`);
      throw new Error(`${error.message}; archived: ${pieces.join(', ')}; stream: ${JSON.stringify((await pointInTime(server!.url, key))?.streaming)}`);
    });
    return until(
      'a window that ends after the last commit',
      async () => {
        const data = await pointInTime(server!.url, key);
        return data?.window && Date.parse(data.window.end) >= lastCommit ? data : undefined;
      },
      60_000,
    );
  }

  /** Restores `target` through the API into a served copy and returns the ids it holds. */
  async function restore(restoreTarget: Record<string, unknown>): Promise<number[]> {
    const targetPath = join(work, `restore-${randomBytes(3).toString('hex')}`);
    const servePort = await freePort();
    const reply = await call(server!.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: restoreTarget, targetPath, servePort } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    served.push(targetPath);
    const done = await waitForEnd(server!.url, key, reply.body.data.executionId, 150_000);
    expect(done.status, JSON.stringify(done.logs?.slice?.(-15))).toBe('Success');
    const client = new pg.Client({ host: '127.0.0.1', port: servePort, user: ROLE.user, password: ROLE.password, database: 'postgres' });
    try {
      await client.connect();
      return (await client.query<{ id: number }>('SELECT id FROM fault_rows ORDER BY id')).rows.map((row) => row.id);
    } finally {
      await client.end().catch(() => undefined);
      await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', targetPath, 'stop', '-m', 'fast']).catch(() => undefined);
      await rm(targetPath, { recursive: true, force: true });
    }
  }
});

/**
 * The job's plan does not resolve until the test lets it (the supervisor skips a job that does not resolve and keeps
 * its slot): the supervisor's first pass runs while the server boots, before the test could listen to its events.
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

