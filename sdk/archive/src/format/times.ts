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
 * The time to hand `fs.utimes`/`lutimes` so the file gets exactly the stored time cut to its microsecond (what the
 * kernel call libuv makes keeps). Two traps: libuv truncates the double's fraction to whole microseconds, so a time
 * that is a whole microsecond but lands a hair below it in binary loses one; and Node replaces a negative *number*
 * (any time before 1970) by the current time. So the value is the microsecond nudged half a microsecond away from
 * zero (far more than a double's error for dates before the 23rd century), passed as a decimal string, which Node
 * takes as it is.
 */
export function paxTimeForUtimes(mtime: string): string {
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(mtime);
  if (!match) throw new ArchiveInputError(`mtime "${mtime}" is not decimal seconds`);
  const magnitude = BigInt(match[2]!) * NS_PER_SECOND + BigInt((match[3] ?? '').padEnd(9, '0'));
  const nanoseconds = match[1] ? -magnitude : magnitude;
  // Floor to the microsecond: the kernel keeps (seconds, nanoseconds >= 0), so a negative time rounds down too.
  let microseconds = nanoseconds / 1000n;
  if (nanoseconds < 0n && nanoseconds % 1000n !== 0n) microseconds -= 1n;
  return formatNanoseconds(microseconds * 1000n + (microseconds < 0n ? -500n : 500n));
}
