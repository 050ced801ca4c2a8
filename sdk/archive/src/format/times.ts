import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveInputError } from '../errors.js';

/** A modification time as callers have it: a Date, milliseconds, nanoseconds (bigint, from `stat({bigint})`), or pax text. */
export type MtimeInput = Date | number | bigint | string;

const NS_PER_SECOND = 1_000_000_000n;

/** Converts to pax decimal seconds ("1700000000.123456789", no trailing zeros), which keeps nanoseconds. */
export function toPaxTime(value: MtimeInput): string {
  if (typeof value === 'string') {
    if (!/^-?\d+(\.\d{1,9})?$/.test(value)) throw new ArchiveInputError(`mtime "${value}" is not decimal seconds`);
    return value;
  }
  if (typeof value === 'bigint') return formatNanoseconds(value);
  const milliseconds = value instanceof Date ? value.getTime() : value;
  if (!Number.isFinite(milliseconds)) throw new ArchiveInputError(`mtime ${String(value)} is not a finite time`);
  return formatNanoseconds(BigInt(Math.round(milliseconds * 1_000_000)));
}

function formatNanoseconds(nanoseconds: bigint): string {
  const sign = nanoseconds < 0n ? '-' : '';
  const magnitude = nanoseconds < 0n ? -nanoseconds : nanoseconds;
  const fraction = (magnitude % NS_PER_SECOND).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${magnitude / NS_PER_SECOND}${fraction ? `.${fraction}` : ''}`;
}

/** Seconds as a number (for display and arithmetic; give `fs.utimes` {@link paxTimeForUtimes} instead). */
export function paxTimeToSeconds(mtime: string): number {
  return Number(mtime);
}

/**
 * The time to hand `fs.utimes`/`lutimes` so the file gets the stored time as closely as this runtime can set it,
 * passed as a decimal string (Node replaces a negative *number*, any time before 1970, by the current time).
 *
 * Two runtimes differ (see {@link utimesKeepsNanoseconds}):
 * - libuv before 1.49 (Node 20) truncates the double's fraction to whole microseconds, so a whole microsecond that
 *   lands a hair below itself in binary would lose one: the value is the microsecond floored and nudged half a
 *   microsecond away from zero, and the file gets exactly the stored time cut to its microsecond.
 * - newer libuv (Node 22.x, 24) sets nanoseconds from the double: the stored time is passed as it is, and the file
 *   gets it to within the double's precision (exact for times a double holds, under 0.25 µs off until 2038).
 */
export function paxTimeForUtimes(mtime: string): string {
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(mtime);
  if (!match) throw new ArchiveInputError(`mtime "${mtime}" is not decimal seconds`);
  if (utimesKeepsNanoseconds()) return mtime;
  const magnitude = BigInt(match[2]!) * NS_PER_SECOND + BigInt((match[3] ?? '').padEnd(9, '0'));
  const nanoseconds = match[1] ? -magnitude : magnitude;
  // Floor to the microsecond: the kernel keeps (seconds, nanoseconds >= 0), so a negative time rounds down too.
  let microseconds = nanoseconds / 1000n;
  if (nanoseconds < 0n && nanoseconds % 1000n !== 0n) microseconds -= 1n;
  return formatNanoseconds(microseconds * 1000n + (microseconds < 0n ? -500n : 500n));
}

let keepsNanoseconds: boolean | undefined;

/**
 * Whether `fs.utimes` on this runtime sets sub-microsecond times. Asked of the runtime once (a temp file set to
 * 1.5 µs after the epoch and read back) rather than guessed from version numbers: the change came with a libuv
 * update, not a Node major.
 */
export function utimesKeepsNanoseconds(): boolean {
  if (keepsNanoseconds !== undefined) return keepsNanoseconds;
  const folder = mkdtempSync(join(tmpdir(), 'holdfast-utimes-'));
  try {
    const probe = join(folder, 'probe');
    writeFileSync(probe, '');
    utimesSync(probe, '0.0000015', '0.0000015');
    keepsNanoseconds = statSync(probe, { bigint: true }).mtimeNs === 1500n;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return keepsNanoseconds;
}
