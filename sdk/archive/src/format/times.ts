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

/** Seconds as a number for `fs.utimes` (sub-microsecond digits are lost there anyway). */
export function paxTimeToSeconds(mtime: string): number {
  return Number(mtime);
}
