import { AdapterError, type AdapterErrorOrigin, type ByteRange } from '@holdfast/kernel/adapter';

/**
 * Validates an optional inclusive byte range against an object's size and returns inclusive `start`/`end` for a read
 * stream (`{}` for the whole object). An end past the object is clamped, as HTTP servers do; a start at or past the
 * size, or an end before the start, is a `CONFIG` error naming the key.
 */
export function resolveByteRange(
  origin: AdapterErrorOrigin,
  key: string,
  size: number,
  range: ByteRange | undefined,
): { start?: number; end?: number } {
  if (!range) return {};
  const { start, end } = range;
  const isValid =
    Number.isInteger(start) && start >= 0 && start < size && (end === undefined || (Number.isInteger(end) && end >= start));
  if (!isValid) {
    throw new AdapterError(
      origin,
      'CONFIG',
      `invalid range ${start}-${end ?? ''} for "${key}" of ${size} bytes (start must be below the size, end >= start)`,
    );
  }
  return { start, end: end === undefined ? size - 1 : Math.min(end, size - 1) };
}
