import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { AdapterError, type PointRestoreInput, type RecoveryTarget } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';

const run = promisify(execFile);

/** The default wal_segment_size; initdb --wal-segsize may have chosen another power of two. */
const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const FOUR_GIB = 0x100000000;

function hex8(value: number): string {
  return value.toString(16).toUpperCase().padStart(8, '0');
}

/** The cluster's WAL segment size as its pg_control records it (read with pg_controldata from the unpacked base). */
export async function readSegmentBytes(binDirectory: string, dataDir: string): Promise<number> {
  const { stdout } = await run(path.join(binDirectory, 'pg_controldata'), [dataDir], { env: { ...process.env, LC_ALL: 'C', LANG: 'C' } }).catch(() => ({ stdout: '' }));
  const bytes = Number(/Bytes per WAL segment:\s+(\d+)/.exec(stdout)?.[1]);
  return Number.isInteger(bytes) && bytes >= 1024 * 1024 && bytes <= 1024 ** 3 ? bytes : DEFAULT_SEGMENT_BYTES;
}

/**
 * The segment after `name` on the same timeline: with 16 MiB segments `…000000FF` is followed by the next log
 * number's `…00000000` (a 4 GiB log holds 4 GiB / segment size segments).
 */
export function nextSegmentName(name: string, segmentBytes = DEFAULT_SEGMENT_BYTES): string {
  const match = /^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$/i.exec(name);
  if (!match) throw new AdapterError(ORIGIN, 'CONFIG', `"${name}" is not a WAL segment name`);
  const [, timeline, log, segment] = match as unknown as [string, string, string, string];
  const next = parseInt(segment, 16) + 1;
  const rollsOver = next >= FOUR_GIB / segmentBytes;
  return `${timeline.toUpperCase()}${hex8(parseInt(log, 16) + (rollsOver ? 1 : 0))}${hex8(rollsOver ? 0 : next)}`;
}

/** The segment holding LSN `X/Y` on `timeline`. */
export function segmentOf(position: string, timeline: number, segmentBytes = DEFAULT_SEGMENT_BYTES): string {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(position.trim());
  if (!match) throw new AdapterError(ORIGIN, 'CONFIG', `"${position}" is not a WAL position (LSN such as 0/3000028)`);
  const byte = BigInt(`0x${match[1]}`) * BigInt(FOUR_GIB) + BigInt(`0x${match[2]}`);
  const segment = Number(byte / BigInt(segmentBytes));
  const perLog = FOUR_GIB / segmentBytes;
  return `${hex8(timeline)}${hex8(Math.floor(segment / perLog))}${hex8(segment % perLog)}`;
}

/** Latest commit time `pg_waldump` sees in one segment file, or null when it shows none (or cannot read it). */
async function lastCommitIn(pgWaldump: string, file: string): Promise<Date | null> {
  // pg_waldump exits non-zero at the end of the valid records of a partial segment; what it printed still counts.
  const output = await run(pgWaldump, ['--rmgr=Transaction', file], { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, TZ: 'UTC' } }).then(
    (result) => result.stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  let latest: Date | null = null;
  for (const match of output.matchAll(/desc: (?:COMMIT|ABORT) (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\w+)/g)) {
    // TZ=UTC above makes pg_waldump print UTC; anything else (an odd build) disables the shortcut rather than guess.
    if (match[2] !== 'UTC' && match[2] !== 'GMT') return null;
    const time = new Date(`${match[1]!.replace(' ', 'T')}Z`);
    if (!latest || time > latest) latest = time;
  }
  return latest;
}

/** What the fetch needs besides the input. */
export interface WalFetchPlan {
  walDir: string;
  segmentBytes: number;
  pgWaldump?: string;
  onSegment(name: string, count: number): void;
}

/**
 * Copies the WAL the replay needs into `walDir`, in order from the base's start segment, until the archive has no
 * next segment (`fetchSegment` returns null) or the target is certainly covered: for a `position` target the
 * segment holding it and one more (a record may end there); for a `time` target the first segment in which
 * pg_waldump shows a commit after the target (replay stops before that commit). `latest` and `name` fetch all.
 */
export async function fetchWal(input: PointRestoreInput, plan: WalFetchPlan): Promise<number> {
  const stopAfter = input.target.type === 'position' ? nextSegmentName(segmentOf(input.target.position, input.base.timeline, plan.segmentBytes), plan.segmentBytes) : undefined;
  let name = input.base.startSegment;
  let count = 0;
  for (;;) {
    if (input.signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted while fetching WAL');
    const body = await input.fetchSegment(name);
    if (!body) break;
    const file = path.join(plan.walDir, name);
    await pipeline(body, createWriteStream(file, { mode: 0o600 }), { signal: input.signal }).catch((error: unknown) => {
      if (input.signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted while fetching WAL');
      throw new AdapterError(ORIGIN, 'TRANSIENT', `cannot fetch WAL segment ${name}: ${(error as Error).message}`, { cause: error });
    });
    count += 1;
    plan.onSegment(name, count);
    if (name === stopAfter) break;
    if (isPastTime(input.target) && plan.pgWaldump) {
      const latest = await lastCommitIn(plan.pgWaldump, file);
      if (latest && latest > input.target.time) break;
    }
    name = nextSegmentName(name, plan.segmentBytes);
  }
  if (count === 0) {
    throw new AdapterError(ORIGIN, 'NOT_FOUND', `the archive has no WAL segment ${input.base.startSegment}, where the base backup starts: it cannot be made consistent`);
  }
  return count;
}

function isPastTime(target: RecoveryTarget): target is { type: 'time'; time: Date } {
  return target.type === 'time';
}
