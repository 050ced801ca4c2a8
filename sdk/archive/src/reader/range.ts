import type { Readable } from 'node:stream';
import { collectBytes } from './collect-bytes.js';

/** Reads bytes `start` to `endInclusive` of an archive (an HTTP Range, an S3 ranged GET, a file read). */
export type RangeReader = (start: number, endInclusive: number) => Promise<Readable>;

/** Reads a small range whole (the tail, the index). */
export async function readRange(rangeReader: RangeReader, start: number, endInclusive: number): Promise<Buffer> {
  return collectBytes(await rangeReader(start, endInclusive));
}
