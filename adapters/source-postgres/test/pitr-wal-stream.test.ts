// Issue 43: the continuous WAL stream against the PITR test cluster (127.0.0.1:5433). pg_receivewal on a slot of its
// own per test (holdfast_<unique id>, dropped in afterAll: a forgotten slot keeps WAL on the shared cluster); segments
// are compared with the server's own files, read as superuser over the launcher's socket.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { container } from 'tsyringe';
import { afterAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type ChangeLogNotice, type ChangeLogSegment, type ChangeLogStream } from '@holdfast/sdk';
import definition from '../src/index.js';
import { slotNameFor } from '../src/internal/pitr/slot.js';
import { dropWalStreamSlot, openWalStream } from '../src/internal/pitr/wal-stream.js';
import { nextSegmentName, parseLsn, segmentNameFor, segmentStartLsn } from '../src/internal/pitr/wal-names.js';
import { physicalConfig, physicalSettings, superSql } from './pitr-helpers.js';

const config = physicalConfig();
const work = mkdtempSync(join(tmpdir(), 'hf-pitr-wal-'));
const streamIds: string[] = [];
const table = `hf_walstream_${randomBytes(4).toString('hex')}`;

/** Streams a failed test left running: stopped before their slots are dropped (an active slot cannot be). */
const running = new Set<{ stop(): Promise<void> }>();

afterAll(async () => {
  for (const run of running) await run.stop().catch(() => undefined);
  for (const id of streamIds) await dropWalStreamSlot(config, id);
  await superSql(`DROP TABLE IF EXISTS ${table}`);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

function newStreamId(): string {
  const id = `test-${randomBytes(6).toString('hex')}`;
  streamIds.push(id);
  return id;
}

interface Seen extends ChangeLogSegment {
  seenAt: number;
}

/** Opens a stream and consumes its segments in the background. */
function open(streamId: string, spoolDir: string, flushIntervalMs = 1000) {
  const controller = new AbortController();
  const stream: ChangeLogStream = openWalStream(config, { streamId, spoolDir, flushIntervalMs, signal: controller.signal });
  const notices: ChangeLogNotice[] = [];
  stream.onNotice((notice) => notices.push(notice));
  const seen: Seen[] = [];
  const consumed = (async () => {
    for await (const segment of stream.segments) seen.push({ ...segment, seenAt: Date.now() });
  })();
  consumed.catch(() => undefined);
  const until = async <T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const found = probe();
      if (found !== undefined && found !== false) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`timed out waiting for ${what}; notices: ${JSON.stringify(notices)}; segments: ${seen.map((s) => `${s.name}${s.partial ? '(p)' : ''}`).join(' ')}`);
  };
  const stop = async () => {
    running.delete(handle);
    controller.abort();
    await stream.done;
    await consumed;
  };
  const handle = { stream, notices, seen, until, stop };
  running.add(handle);
  return handle;
}

/** Writes some WAL and ends the segment; returns the name of the segment the switch completed. */
async function writeAndSwitch(rows = 2000): Promise<string> {
  await superSql(`CREATE TABLE IF NOT EXISTS ${table} (id serial, note text)`);
  await superSql(`INSERT INTO ${table} (note) SELECT md5(i::text) FROM generate_series(1, $1) i`, [rows]);
  const [row] = await superSql<{ name: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS name');
  return row!.name;
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the WAL stream of a physical-mode source', () => {
  it('creates its slot, yields grown partials at the interval and the completed segment byte for byte, and forgets archived ones', async () => {
    const streamId = newStreamId();
    const spool = join(work, 'first');
    const run = open(streamId, spool, 1000);
    await run.until('started', () => run.notices.find((notice) => notice.type === 'started'));
    const [slot] = await superSql<{ restart: string | null; active: boolean }>('SELECT restart_lsn::text AS restart, active FROM pg_replication_slots WHERE slot_name = $1', [slotNameFor(streamId)]);
    expect(slot).toBeDefined();
    expect(slot!.restart).not.toBeNull(); // RESERVE_WAL: the server holds WAL from the slot's creation on
    // The lag gauge: the server's position minus the slot's, read at once and every few seconds.
    const lag = await run.until('a lag notice', () => run.notices.find((notice) => notice.type === 'lag'));
    expect((lag as { bytes: number }).bytes).toBeGreaterThanOrEqual(0);
    expect((lag as { bytes: number }).bytes).toBeLessThan(1024 ** 3);
    // The test cluster caps slots (max_slot_wal_keep_size = 1GB): no warning about an unlimited slot.
    expect(run.notices.some((notice) => notice.type === 'warning' && notice.message.includes('max_slot_wal_keep_size'))).toBe(false);

    await superSql(`CREATE TABLE IF NOT EXISTS ${table} (id serial, note text)`);
    await superSql(`INSERT INTO ${table} (note) SELECT md5(i::text) FROM generate_series(1, 500) i`);
    // Other test files switch WAL on the shared cluster: a switch right after the insert completes its segment before
    // the flush, and an idle next segment yields no partial. A row every 300 ms keeps the current segment growing.
    const ticks = setInterval(() => void superSql(`INSERT INTO ${table} (note) VALUES ('tick')`).catch(() => undefined), 300);
    const partial = await run.until('a partial segment', () => run.seen.find((segment) => segment.partial)).finally(() => clearInterval(ticks));
    expect(partial.size).toBe(16 * 1024 * 1024);
    expect(partial.path).toContain(join(spool, '.snapshots'));
    expect(existsSync(partial.path)).toBe(true);
    expect(parseLsn(partial.endPosition!)).toBeGreaterThan(0n);

    const switched = await writeAndSwitch();
    const completed = await run.until(`completed segment ${switched}`, () => run.seen.find((segment) => !segment.partial && segment.name === switched));
    const [server] = await superSql<{ bytes: Buffer }>('SELECT pg_read_binary_file($1) AS bytes', [`pg_wal/${switched}`]);
    expect(completed.size).toBe(server!.bytes.length);
    expect(sha(readFileSync(completed.path))).toBe(sha(server!.bytes));
    expect(completed.coversUntil.getTime()).toBeLessThanOrEqual(Date.now());

    // Partials of one segment are reported only when they grew, and no faster than the interval.
    const partials = run.seen.filter((segment) => segment.partial);
    for (let i = 1; i < partials.length; i++) {
      if (partials[i]!.name !== partials[i - 1]!.name) continue;
      expect(parseLsn(partials[i]!.endPosition!)).toBeGreaterThan(parseLsn(partials[i - 1]!.endPosition!));
      expect(partials[i]!.seenAt - partials[i - 1]!.seenAt).toBeGreaterThanOrEqual(900);
    }
    // The completed segment comes after every partial of the same name.
    const completedIndex = run.seen.indexOf(completed);
    expect(run.seen.slice(completedIndex + 1).some((segment) => segment.name === switched)).toBe(false);

    await run.stream.archived(completed);
    expect(existsSync(completed.path)).toBe(false);
    await run.stream.archived(partial);
    expect(existsSync(partial.path)).toBe(false);
    await run.stop();
    const [after] = await superSql<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slotNameFor(streamId)]);
    expect(after!.active).toBe(false); // pg_receivewal is gone
    await dropWalStreamSlot(config, streamId);
    await dropWalStreamSlot(config, streamId); // idempotent
    expect(await superSql('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slotNameFor(streamId)])).toEqual([]);
  }, 60_000);

  it('dates a partial by what it holds: with pg_receivewal held back, no WAL the server inserted before a partial\'s coversUntil lies beyond its end', async () => {
    const streamId = newStreamId();
    const spool = join(work, 'dated');
    const run = open(streamId, spool, 300);
    await run.until('started', () => run.notices.find((notice) => notice.type === 'started'));
    const receiver = Number(execFileSync('pgrep', ['-f', '-n', `pg_receivewal --directory ${spool} `], { encoding: 'utf8' }).trim());
    expect(receiver).toBeGreaterThan(0);
    await superSql(`CREATE TABLE IF NOT EXISTS ${table} (id serial, note text)`);
    // The probe: (time its query returned, the server's insert position then). A reading that returned before a
    // partial's coversUntil and saw WAL inserted beyond the partial's end proves the partial claims a moment whose
    // commits it does not hold: the defect of dating a copy by when it was taken, and of dating it by the flush
    // position on this cluster (synchronous_commit = off: commits are acknowledged before their WAL is flushed).
    const probes: { returnedAt: number; lsn: bigint }[] = [];
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const [row] = await superSql<{ lsn: string }>(`WITH ins AS (INSERT INTO ${table} (note) VALUES ('dated') RETURNING 1) SELECT pg_current_wal_insert_lsn()::text AS lsn FROM ins`);
        probes.push({ returnedAt: Date.now(), lsn: parseLsn(row!.lsn) });
      }
    })();
    // Hold pg_receivewal back most of the time (stopped 150 ms, running 15 ms): it lags the server by up to 150 ms
    // while its file still grows, so copies are taken of a file behind the server.
    const started = Date.now();
    try {
      while (Date.now() - started < 5000) {
        process.kill(receiver, 'SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, 150));
        process.kill(receiver, 'SIGCONT');
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    } finally {
      process.kill(receiver, 'SIGCONT');
      writing = false;
      await writer;
    }
    const partials = await run.until('partials while held back', () => {
      const found = run.seen.filter((segment) => segment.partial && segment.seenAt >= started);
      return found.length >= 3 ? found : undefined;
    });
    for (const partial of partials) {
      const end = parseLsn(partial.endPosition!);
      const contradicting = probes.find((probe) => probe.returnedAt < partial.coversUntil.getTime() && probe.lsn > end);
      expect(contradicting, `partial ${partial.name} up to ${partial.endPosition} claims ${partial.coversUntil.toISOString()}`).toBeUndefined();
    }
    // Dated, not frozen: the claims move on with the stream, and none is in the future.
    const claims = partials.map((partial) => partial.coversUntil.getTime());
    for (let i = 1; i < claims.length; i++) expect(claims[i]!).toBeGreaterThanOrEqual(claims[i - 1]!);
    expect(claims.at(-1)!).toBeGreaterThan(claims[0]!);
    expect(claims.at(-1)!).toBeLessThanOrEqual(Date.now());
    await run.stop();
    // The newest claim is kept in the spool, so a restarted stream never claims less.
    const state = JSON.parse(readFileSync(join(spool, '.holdfast-wal-stream.json'), 'utf8')) as { coveredUntil?: number };
    expect(state.coveredUntil).toBeGreaterThanOrEqual(claims.at(-1)!);
    await dropWalStreamSlot(config, streamId);
  }, 60_000);

  it('resumes after a stop on the same spool with no missing segment', async () => {
    const streamId = newStreamId();
    const spool = join(work, 'resume');
    const first = open(streamId, spool);
    const firstSegment = await writeAndSwitch();
    await first.until(`segment ${firstSegment}`, () => first.seen.find((segment) => !segment.partial && segment.name === firstSegment));
    // The new slot reserves WAL from the last checkpoint on, so segments from before the switch come too: all archived.
    for (const segment of first.seen.filter((seen) => !seen.partial)) await first.stream.archived(segment);
    await first.stop();

    // WAL written while the stream is stopped: the slot keeps it.
    await writeAndSwitch();
    const lastWhileStopped = await writeAndSwitch();

    const second = open(streamId, spool);
    await second.until(`segment ${lastWhileStopped}`, () => second.seen.find((segment) => !segment.partial && segment.name === lastWhileStopped));
    expect(second.notices.find((notice) => notice.type === 'started')).toMatchObject({ slot: slotNameFor(streamId) });
    const names = second.seen.filter((segment) => !segment.partial).map((segment) => segment.name);
    expect(names[0]).toBe(nextSegmentName(firstSegment)); // the archived one is not reported again
    for (let i = 1; i < names.length; i++) expect(names[i]).toBe(nextSegmentName(names[i - 1]!));
    expect(names.at(-1)).toBe(lastWhileStopped);
    expect(second.notices.some((notice) => notice.type === 'gap' || notice.type === 'slot-missing')).toBe(false);
    await second.stop();
    await dropWalStreamSlot(config, streamId);
  }, 60_000);

  it('reports a dropped slot and the gap it left, then streams on from the new slot', async () => {
    const streamId = newStreamId();
    const spool = join(work, 'dropped');
    const first = open(streamId, spool);
    const lastArchived = await writeAndSwitch();
    await first.until(`segment ${lastArchived}`, () => first.seen.find((seen) => !seen.partial && seen.name === lastArchived));
    for (const segment of first.seen.filter((seen) => !seen.partial)) await first.stream.archived(segment);
    await first.stop();

    // Someone drops the slot while the stream is stopped; the server then recycles the WAL nobody holds any more.
    await dropWalStreamSlot(config, streamId); // waits for the WAL sender of the stopped stream to let go
    for (let i = 0; i < 3; i++) await writeAndSwitch(200);
    await superSql('CHECKPOINT');
    const [kept] = await superSql<{ present: boolean }>('SELECT count(*) > 0 AS present FROM pg_ls_waldir() WHERE name = $1', [nextSegmentName(lastArchived)]);
    if (kept!.present) {
      // Another test's slot on the shared cluster still holds that WAL, so the server did not remove it. The spool is
      // then made to resume from a segment older than any the server has: the same refusal a removed segment gives.
      const [oldest] = await superSql<{ name: string }>("SELECT min(name) AS name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'");
      const older = segmentNameFor(segmentStartLsn(oldest!.name) - 1n, 1);
      console.info(`the server still has ${nextSegmentName(lastArchived)} (held by another slot): the spool resumes from ${older} instead`);
      for (const name of readdirSync(spool)) if (/^[0-9A-F]{24}(\.partial)?$/.test(name)) rmSync(join(spool, name));
      writeFileSync(join(spool, `${older}.partial`), Buffer.alloc(16 * 1024 * 1024));
    }

    const second = open(streamId, spool);
    const gap = await second.until('a gap notice', () => second.notices.find((notice) => notice.type === 'gap'));
    expect(second.notices.find((notice) => notice.type === 'slot-missing')).toMatchObject({ slot: slotNameFor(streamId) });
    expect(gap).toMatchObject({ lastArchived });
    const nextAvailable = (gap as { nextAvailable: string }).nextAvailable;
    expect(nextAvailable > nextSegmentName(lastArchived), JSON.stringify({ lastArchived, notices: second.notices })).toBe(true);
    // Streaming goes on from the new slot: the next completed segment is at or after the first available one.
    const after = await writeAndSwitch();
    await second.until(`segment ${after}`, () => second.seen.find((seen) => !seen.partial && seen.name === after));
    expect(second.seen.filter((seen) => !seen.partial).every((seen) => seen.name >= nextAvailable)).toBe(true);
    await second.stop();
    await dropWalStreamSlot(config, streamId);
  }, 60_000);

  it('recreates a slot dropped while the stream runs and streams on', async () => {
    const streamId = newStreamId();
    const run = open(streamId, join(work, 'dropped-running'));
    await run.until('started', () => run.notices.find((notice) => notice.type === 'started'));
    // End pg_receivewal's WAL sender and drop the slot before the stream restarts pg_receivewal (1 s later).
    const slot = slotNameFor(streamId);
    const deadline = Date.now() + 900;
    let dropped = false;
    await superSql('SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL', [slot]);
    while (!dropped && Date.now() < deadline) {
      dropped = await superSql('SELECT pg_drop_replication_slot($1)', [slot]).then(() => true, () => false);
      if (!dropped) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(dropped).toBe(true);
    const missing = await run.until('slot-missing', () => run.notices.find((notice) => notice.type === 'slot-missing'));
    expect(missing).toMatchObject({ slot, message: expect.stringContaining('dropped while the stream ran') });
    const after = await writeAndSwitch();
    await run.until(`segment ${after}`, () => run.seen.find((seen) => !seen.partial && seen.name === after));
    expect((await superSql<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]))[0]?.active).toBe(true);
    await run.stop();
    await dropWalStreamSlot(config, streamId);
  }, 60_000);

  it('sets aside the WAL of another server left in the spool and starts afresh', async () => {
    const streamId = newStreamId();
    const spool = join(work, 'foreign');
    mkdirSync(join(spool, '.ready'), { recursive: true });
    writeFileSync(join(spool, '.holdfast-wal-stream.json'), JSON.stringify({ slot: slotNameFor(streamId), systemId: '1234', lastCompleted: '000000010000000000000002' }));
    writeFileSync(join(spool, '000000010000000000000002'), Buffer.alloc(16 * 1024 * 1024, 1));
    writeFileSync(join(spool, '.ready', '000000010000000000000002'), Buffer.alloc(16 * 1024 * 1024, 1));
    const run = open(streamId, spool);
    const warning = await run.until('the warning', () => run.notices.find((notice) => notice.type === 'warning'));
    expect(warning).toMatchObject({ message: expect.stringContaining('another server (system identifier 1234') });
    expect(readdirSync(join(spool, '.foreign-1234')).sort()).toEqual(['000000010000000000000002', 'ready-000000010000000000000002']);
    // Not a dropped slot: the state of the other server was dropped with its WAL.
    expect(run.notices.some((notice) => notice.type === 'slot-missing')).toBe(false);
    const after = await writeAndSwitch();
    await run.until(`segment ${after}`, () => run.seen.find((seen) => !seen.partial && seen.name === after));
    expect(run.seen.some((seen) => seen.name === '000000010000000000000002')).toBe(false);
    await run.stop();
    await dropWalStreamSlot(config, streamId);
  }, 60_000);

  it('through the adapter, pointInTime() streams with the source\'s walFlushIntervalSeconds and drops the slot', async () => {
    const streamId = newStreamId();
    const support = instantiateAdapter(container, definition, physicalSettings('repl', { walFlushIntervalSeconds: 1 })).pointInTime!()!;
    const controller = new AbortController();
    // The engine's own interval (ten minutes here) gives way to the source's one second.
    const stream = support.openChangeLogStream({ streamId, spoolDir: join(work, 'adapter'), flushIntervalMs: 600_000, signal: controller.signal });
    const partial = (async () => {
      for await (const segment of stream.segments) if (segment.partial) return segment;
      return undefined;
    })();
    await superSql(`CREATE TABLE IF NOT EXISTS ${table} (id serial, note text)`);
    await superSql(`INSERT INTO ${table} (note) SELECT md5(i::text) FROM generate_series(1, 300) i`);
    const first = await Promise.race([partial, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 8000))]);
    expect(first?.partial).toBe(true);
    controller.abort();
    await stream.done;
    await support.dropChangeLogStream!(streamId);
    expect(await superSql('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slotNameFor(streamId)])).toEqual([]);
  }, 30_000);

  it('keeps trying, with warnings, while the server cannot be reached, and stops cleanly on abort', async () => {
    const controller = new AbortController();
    // Nothing listens on port 1: the connection is refused, a passing failure (a server restarting looks the same).
    const stream = openWalStream(physicalConfig('repl', { port: 1 }), { streamId: newStreamId(), spoolDir: join(work, 'unreachable'), flushIntervalMs: 1000, signal: controller.signal });
    const notices: ChangeLogNotice[] = [];
    stream.onNotice((notice) => notices.push(notice));
    const consumed = (async () => {
      for await (const segment of stream.segments) void segment;
    })();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(notices.filter((notice) => notice.type === 'warning').length).toBeGreaterThanOrEqual(2); // at once, then after 1 s
    expect(notices[0]).toMatchObject({ type: 'warning', message: expect.stringMatching(/^starting the WAL stream failed: .*cannot connect to 127\.0\.0\.1:1.*; retrying in 1 s$/) });
    controller.abort();
    await expect(stream.done).resolves.toBeUndefined();
    await consumed;
  }, 30_000);

  it('fails with the missing privilege for a role without REPLICATION', async () => {
    const controller = new AbortController();
    const stream = openWalStream(physicalConfig('norepl'), { streamId: newStreamId(), spoolDir: join(work, 'norepl'), flushIntervalMs: 1000, signal: controller.signal });
    const failure = await stream.done.catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'AUTH', message: expect.stringContaining('role "holdfast_norepl" lacks the REPLICATION privilege') });
    await expect((async () => {
      for await (const segment of stream.segments) void segment;
    })()).rejects.toBe(failure);
    expect(statSync(join(work, 'norepl')).isDirectory()).toBe(true);
  }, 30_000);
});
