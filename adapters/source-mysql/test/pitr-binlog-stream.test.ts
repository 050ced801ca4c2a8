// Issue 44: the continuous binary log stream against the MariaDB PITR test server (127.0.0.1:3307). mariadb-binlog
// reads as a replica; completed files are compared byte for byte with the server's own files (read from its data
// directory: the tests run on the same host as root). Each test streams into a spool of its own.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeLogNotice, ChangeLogSegment, ChangeLogStream } from '@holdfast/sdk';
import { scanEvents } from '../src/internal/pitr/binlog-events.js';
import { binlogAfter, binlogNumber } from '../src/internal/pitr/binlog-names.js';
import { resolveBinlogTool } from '../src/internal/pitr/binlog-tool.js';
import { topUpCopy } from '../src/internal/pitr/binlog-topup.js';
import { openBinlogStream } from '../src/internal/pitr/binlog-stream.js';
import { adminSql, pitrConfig, pitrServer, serverLogs } from './pitr-helpers.js';

const config = pitrConfig('binlog');
const work = mkdtempSync(join(tmpdir(), 'hf-binlog-stream-'));
const database = `hf_binlog_${randomBytes(4).toString('hex')}`;

/** Streams a failed test left running, stopped in afterAll. */
const running = new Set<{ stop(): Promise<void> }>();

beforeAll(async () => {
  await adminSql(`CREATE DATABASE ${database}`);
  await adminSql(`CREATE TABLE ${database}.notes (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200), at DATETIME(3))`);
});

afterAll(async () => {
  for (const run of running) await run.stop().catch(() => undefined);
  await adminSql(`DROP DATABASE IF EXISTS ${database}`);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

interface Seen extends ChangeLogSegment {
  bytes: Buffer;
  seenAt: number;
}

/** Opens a stream and consumes its pieces like the archiver: read, then `archived()`. */
function open(spoolDir: string, flushIntervalMs = 1000, streamId = `test-${randomBytes(4).toString('hex')}`) {
  const controller = new AbortController();
  const stream: ChangeLogStream = openBinlogStream(config, { streamId, spoolDir, flushIntervalMs, signal: controller.signal });
  const notices: ChangeLogNotice[] = [];
  stream.onNotice((notice) => notices.push(notice));
  const seen: Seen[] = [];
  const consumed = (async () => {
    for await (const segment of stream.segments) {
      seen.push({ ...segment, bytes: readFileSync(segment.path), seenAt: Date.now() });
      await stream.archived(segment);
    }
  })();
  consumed.catch(() => undefined);
  const until = async <T>(what: string, probe: () => T | undefined | false, ms = 20_000): Promise<T> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const found = probe();
      if (found !== undefined && found !== false) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`timed out waiting for ${what}; notices: ${JSON.stringify(notices)}; pieces: ${seen.map((s) => `${s.name}${s.partial ? '(p)' : ''}`).join(' ')}`);
  };
  const stop = async () => {
    running.delete(handle);
    controller.abort();
    await stream.done;
    await consumed;
  };
  const handle = { stream, notices, seen, until, stop, streamId };
  running.add(handle);
  return handle;
}

async function insertRows(count: number, label: string): Promise<void> {
  const values = Array.from({ length: count }, (_, i) => [`${label} ${i} ${randomBytes(40).toString('hex')}`]);
  await adminSql(`INSERT INTO ${database}.notes (note, at) VALUES ${values.map(() => '(?, NOW(3))').join(', ')}`, values.flat());
}

/** Rotates the server's binary log; answers the name of the file it completed. */
async function rotate(): Promise<string> {
  const before = (await serverLogs()).at(-1)!.name;
  await adminSql('FLUSH BINARY LOGS');
  return before;
}

function serverFile(name: string): Buffer {
  return readFileSync(join(pitrServer.dataDir, name));
}

describe('binary log stream', () => {
  it('reports the file being written as partials at the interval, and the rotated file whole, byte for byte', async () => {
    const spool = join(work, 'first');
    const run = open(spool);
    const current = (await serverLogs()).at(-1)!.name;
    const started = await run.until('started', () => run.notices.find((notice) => notice.type === 'started'));
    expect(started).toMatchObject({ type: 'started' });
    expect('resumedFrom' in started && started.resumedFrom).toBeFalsy();

    const beforeInsert = Date.now();
    await insertRows(50, 'first');
    const afterInsert = Date.now();
    // A partial that holds the insert: caught up with the server, so it covers the time of its reading.
    // Another file may rotate the shared server's log at any moment (CI saw it): the partial is of `current` or of a
    // later file, and the comparisons below use the file it names.
    const partial = await run.until('a partial after the insert', () =>
      run.seen.find((piece) => piece.partial && binlogNumber(piece.name) >= binlogNumber(current) && piece.coversUntil.getTime() >= afterInsert),
    );
    expect(partial.bytes.subarray(0, 4)).toEqual(Buffer.from([0xfe, 0x62, 0x69, 0x6e]));
    expect(partial.size).toBe(partial.bytes.length);
    expect(partial.endPosition).toBe(`${partial.name}:${partial.size}`);
    // The partial is the server's file up to a whole event, but for one flag: the server marks the file it is
    // writing "in use" in its format description event (flags, bytes 21-22) and sends that event without the mark
    // (and clears the mark when it completes the file, so a file rotated since has none).
    const server = serverFile(partial.name);
    expect(partial.bytes.readUInt16LE(21) & 1).toBe(0);
    expect(partial.bytes.readUInt16LE(21)).toBe(server.readUInt16LE(21) & ~1);
    expect(partial.bytes.subarray(0, 21).equals(server.subarray(0, 21))).toBe(true);
    expect(partial.bytes.subarray(23).equals(server.subarray(23, partial.size))).toBe(true);
    expect(partial.coversUntil.getTime()).toBeGreaterThan(beforeInsert);
    expect(partial.coversUntil.getTime()).toBeLessThanOrEqual(Date.now());

    // Partials only when the file grew: each partial of the file is larger than the one before (a quiet interval
    // gives none). Other test files write to this server meanwhile, so quiet is not assumed.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const sizes = run.seen.filter((piece) => piece.partial && piece.name === partial.name).map((piece) => piece.size);
    for (let index = 1; index < sizes.length; index++) expect(sizes[index]).toBeGreaterThan(sizes[index - 1]!);

    await insertRows(20, 'before rotation');
    // Another file may rotate the log meanwhile: the file this rotation completed is `current` or a later one.
    const rotated = await rotate();
    expect(binlogNumber(rotated)).toBeGreaterThanOrEqual(binlogNumber(partial.name));
    const whole = await run.until('the rotated file, completed', () => run.seen.find((piece) => !piece.partial && piece.name === rotated));
    expect(whole.bytes.equals(serverFile(rotated))).toBe(true);
    expect(whole.size).toBe(serverFile(rotated).length);
    expect(whole.timeline).toBe(1);
    // The next file is streamed on: a partial of it once it holds a row.
    await insertRows(5, 'after rotation');
    await run.until('a partial of the next file', () => run.seen.find((piece) => piece.partial && piece.name === binlogAfter(rotated)));
    await run.stop();
    // Archived pieces leave the spool: nothing waits in .ready or .snapshots.
    expect(readdirSync(join(spool, '.ready'))).toEqual([]);
    expect(readdirSync(join(spool, '.snapshots'))).toEqual([]);
    expect(run.notices.filter((notice) => notice.type === 'gap')).toEqual([]);
  }, 60_000);

  it('resumes after an abort where it stopped: files rotated meanwhile arrive whole and in order, no gap', async () => {
    const spool = join(work, 'resume');
    const first = open(spool);
    await insertRows(10, 'resume one');
    const current = (await serverLogs()).at(-1)!.name;
    // A piece of the current file, partial or (when another suite on this shared server rotated meanwhile, as a
    // MySQL base backup does: CI failed here once) already completed.
    await first.until('a piece of the current file', () => first.seen.find((piece) => binlogNumber(piece.name) >= binlogNumber(current)));
    await first.stop();
    const newest = first.seen.at(-1)!;

    // While stopped: rows, and two rotations.
    await insertRows(30, 'while stopped');
    const missed = await rotate();
    await insertRows(30, 'while stopped 2');
    const missed2 = await rotate();
    expect(binlogNumber(missed2)).toBeGreaterThan(binlogNumber(missed));
    expect(binlogNumber(missed)).toBeGreaterThanOrEqual(binlogNumber(current));

    const second = open(spool, 1000, first.streamId);
    const started = await second.until('started', () => second.notices.find((notice) => notice.type === 'started'));
    // From the first byte of the file the first run was writing, or of the one after the newest it completed.
    const resumedFrom = String((started as { resumedFrom?: string }).resumedFrom);
    expect(resumedFrom).toMatch(/:4$/);
    const resumedNumber = binlogNumber(resumedFrom.replace(/:4$/, ''));
    expect(resumedNumber).toBeGreaterThanOrEqual(binlogNumber(newest.name));
    expect(resumedNumber).toBeLessThanOrEqual(binlogNumber(newest.name) + 1);
    await second.until('both missed files', () => second.seen.some((piece) => !piece.partial && piece.name === missed2) || undefined);
    // Every file from where it resumed up to the second missed one, completed, once each, in order, byte for byte:
    // contiguous with what the first run saw, whatever else rotated the shared server meanwhile.
    // (A file the first run completed but had not reported yet comes first, from its spool.)
    const completed = second.seen.filter((piece) => !piece.partial).map((piece) => binlogNumber(piece.name));
    const expected = Array.from({ length: binlogNumber(missed2) - resumedNumber + 1 }, (_, i) => resumedNumber + i);
    expect(completed.filter((number) => number >= resumedNumber).slice(0, expected.length)).toEqual(expected);
    expect(completed).toEqual([...new Set(completed)].sort((a, b) => a - b));
    expect(completed).toContain(binlogNumber(missed));
    for (const piece of second.seen.filter((item) => !item.partial)) expect(piece.bytes.equals(serverFile(piece.name))).toBe(true);
    expect(second.notices.filter((notice) => notice.type === 'gap')).toEqual([]);
    await second.stop();
  }, 60_000);

  it('reports a gap when the server purged the file the stream needs while it was stopped, then streams on', async () => {
    const spool = join(work, 'purged');
    const first = open(spool);
    await insertRows(10, 'purge one');
    const current = (await serverLogs()).at(-1)!.name;
    await first.until('a partial of the current file', () => first.seen.find((piece) => piece.partial && piece.name === current));
    await first.stop();

    await insertRows(10, 'lost');
    await rotate();
    await insertRows(10, 'lost too');
    await rotate();
    const survivor = (await serverLogs()).at(-1)!.name;
    // MariaDB keeps a file crash recovery may still need (its binlog checkpoint); purge again until it lets go.
    for (let i = 0; i < 50 && (await serverLogs())[0]!.name !== survivor; i++) {
      await adminSql(`PURGE BINARY LOGS TO '${survivor}'`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await serverLogs())[0]!.name).toBe(survivor);

    const second = open(spool, 1000, first.streamId);
    const gap = await second.until('a gap notice', () => second.notices.find((notice) => notice.type === 'gap'));
    expect(gap).toMatchObject({ type: 'gap', lastArchived: current, nextAvailable: survivor });
    expect(gap.type === 'gap' && gap.message).toContain(`binary log ${current} (received only in part) up to ${survivor} is no longer on the server`);
    await insertRows(5, 'after the gap');
    await second.until('a partial of the surviving file', () => second.seen.find((piece) => piece.partial && piece.name === survivor));
    // Nothing of the purged files is invented: no completed piece of them.
    expect(second.seen.filter((piece) => !piece.partial && binlogNumber(piece.name) < binlogNumber(survivor))).toEqual([]);
    await second.stop();
    expect(existsSync(join(spool, current))).toBe(false);
  }, 60_000);

  it('tops up a copy that is behind with exactly the server bytes that follow it', async () => {
    await insertRows(40, 'top-up');
    const current = (await serverLogs()).at(-1)!.name;
    const server = serverFile(current);
    // A copy cut after a whole event about half way, as a lagging reader would have it.
    const whole = join(work, 'server-copy');
    writeFileSync(whole, server);
    const cut = (await scanEvents(whole, Math.floor(server.length / 2))).end;
    expect(cut).toBeGreaterThan(4);
    expect(cut).toBeLessThan(server.length);
    const copy = join(work, 'lagging-copy');
    writeFileSync(copy, server.subarray(0, cut));
    const added = await topUpCopy(config, await resolveBinlogTool(config), join(work, 'topup'), current, cut, copy);
    const toppedUp = readFileSync(copy);
    expect(added.bytes).toBe(toppedUp.length - cut);
    expect(toppedUp.length).toBeGreaterThanOrEqual(server.length);
    expect(toppedUp.equals(serverFile(current).subarray(0, toppedUp.length))).toBe(true);
    expect(added.newestSeconds).toBeGreaterThan(0);
    expect(existsSync(join(work, 'topup'))).toBe(false);
  }, 30_000);

  it('stops a reader an earlier process left writing into the spool (its pid in the state file), and only that', async () => {
    const spool = join(work, 'leftover');
    mkdirSync(spool, { recursive: true });
    // Stand-ins for a reader left by a process killed with SIGKILL: one names this spool, one names another.
    const leftover = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', `--result-file=${spool}/`], { stdio: 'ignore' });
    const stranger = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', `--result-file=${join(work, 'other')}/`], { stdio: 'ignore' });
    try {
      const leftoverExit = new Promise((resolve) => leftover.once('exit', (_code, signal) => resolve(signal)));
      writeFileSync(join(spool, '.holdfast-binlog-stream.json'), JSON.stringify({ receiverPid: leftover.pid }));
      const run = open(spool);
      expect(await leftoverExit).toBe('SIGKILL');
      const warning = await run.until('the warning', () => run.notices.find((notice) => notice.type === 'warning' && notice.message.includes(`(pid ${leftover.pid})`)));
      expect(warning).toBeDefined();
      await run.until('streaming', () => run.notices.find((notice) => notice.type === 'started'));
      await run.stop();
      // A pid whose command line names another spool is never signalled.
      writeFileSync(join(spool, '.holdfast-binlog-stream.json'), JSON.stringify({ receiverPid: stranger.pid }));
      const again = open(spool);
      await again.until('streaming', () => again.notices.find((notice) => notice.type === 'started'));
      await again.stop();
      expect(stranger.exitCode).toBeNull();
      expect(stranger.signalCode).toBeNull();
    } finally {
      leftover.kill('SIGKILL');
      stranger.kill('SIGKILL');
    }
  }, 30_000);
});
