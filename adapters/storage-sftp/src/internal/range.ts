import { AdapterError, type ByteRange } from '@holdfast/sdk';
import { SFTP_ORIGIN } from './errors.js';

/** Turns an optional inclusive range into ssh2 read-stream `start`/`end` (also inclusive), checked against the size. */
export function readRange(key: string, size: number, range: ByteRange | undefined): { start?: number; end?: number } {
  if (!range) return {};
  const { start, end } = range;
  const valid =
    Number.isInteger(start) && start >= 0 && start < size && (end === undefined || (Number.isInteger(end) && end >= start));
  if (!valid) {
    throw new AdapterError(
      SFTP_ORIGIN,
      'CONFIG',
      `invalid range ${start}-${end ?? ''} for "${key}" of ${size} bytes (start must be below the size, end >= start)`,
    );
  }
  // An end past the object is clamped, as HTTP servers do.
  return { start, end: end === undefined ? size - 1 : Math.min(end, size - 1) };
}
