import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ArchiveFormatError, ArchiveInputError, ArchiveIntegrityError } from '../errors.js';
import { TAIL_SIZE } from '../format/constants.js';
import { decodeIndexFile, INDEX_MAGIC, looksLikeIndexFile } from '../format/index-file.js';
import { decodeIndexStream } from '../format/index-stream.js';
import type { ArchiveIndex } from '../format/index-schema.js';
import { decodeTail, type Trailer } from '../format/trailer.js';
import { collectBytes } from './collect-bytes.js';
import { readRange, type RangeReader } from './range.js';

/** Undoes the writer's `sealIndex` (decrypts, checks a signature). */
export type UnsealIndex = (sealed: Buffer) => Buffer | Promise<Buffer>;

/** Where to read an index from: the archive's tail (two small range reads) or the `.index` sidecar. */
export type IndexSource =
  | { rangeReader: RangeReader; archiveSize: number }
  | { sidecar: Buffer | Readable };

/** Options of {@link readIndex}. */
export interface ReadIndexOptions {
  /** Required when the index was sealed. */
  unsealIndex?: UnsealIndex;
  /** The largest index accepted, so a broken trailer cannot make the reader allocate gigabytes. @default 512 MiB */
  maxIndexBytes?: number;
}

/** Reads and verifies an archive's index. Throws ArchiveIntegrityError when a checksum does not match. */
export async function readIndex(source: IndexSource, options: ReadIndexOptions = {}): Promise<ArchiveIndex> {
  const maxIndexBytes = options.maxIndexBytes ?? 512 * 1024 * 1024;
  if ('sidecar' in source) {
    // A sidecar says nothing about sealing: without a hook it must be a plain index (the format error says "sealed?").
    if (!Buffer.isBuffer(source.sidecar)) return readSidecarStream(source.sidecar, maxIndexBytes, options);
    return unsealAndDecode(source.sidecar, !looksLikeIndexFile(source.sidecar) && options.unsealIndex !== undefined, options);
  }
  const trailer = await readTrailer(source.rangeReader, source.archiveSize);
  if (trailer.indexLength > maxIndexBytes) {
    throw new ArchiveFormatError(`the index is ${trailer.indexLength} bytes, more than maxIndexBytes (${maxIndexBytes})`);
  }
  const end = trailer.indexOffset + trailer.indexLength;
  if (end > source.archiveSize - TAIL_SIZE) throw new ArchiveFormatError('the trailer points past the end of the archive');
  const stored = trailer.indexLength === 0 ? Buffer.alloc(0) : await readRange(source.rangeReader, trailer.indexOffset, end - 1);
  const digest = createHash('sha256').update(stored).digest('hex');
  if (digest !== trailer.indexSha256) {
    throw new ArchiveIntegrityError(`stored index checksum mismatch (trailer says ${trailer.indexSha256}, computed ${digest})`);
  }
  return unsealAndDecode(stored, trailer.isIndexSealed, options);
}

/** Reads the fixed-size tail of an archive and parses its trailer. */
export async function readTrailer(rangeReader: RangeReader, archiveSize: number): Promise<Trailer> {
  if (!Number.isSafeInteger(archiveSize) || archiveSize < TAIL_SIZE) {
    throw new ArchiveInputError(`archiveSize must be an integer of at least ${TAIL_SIZE}, got ${archiveSize}`);
  }
  return decodeTail(await readRange(rangeReader, archiveSize - TAIL_SIZE, archiveSize - 1));
}

/**
 * A plain sidecar stream is decoded as it arrives (never held whole); a sealed one is collected for the unseal hook,
 * which takes the sealed bytes at once.
 */
async function readSidecarStream(sidecar: Readable, maxIndexBytes: number, options: ReadIndexOptions): Promise<ArchiveIndex> {
  const tooLarge = () => new ArchiveFormatError(`the index sidecar is larger than maxIndexBytes (${maxIndexBytes})`);
  const chunks = sidecar[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const start: Buffer[] = [];
  let startLength = 0;
  while (startLength < INDEX_MAGIC.length) {
    const next = await chunks.next();
    if (next.done) break;
    const chunk = Buffer.from(next.value);
    start.push(chunk);
    startLength += chunk.length;
  }
  const first = Buffer.concat(start);
  const rest = { [Symbol.asyncIterator]: () => chunks };
  async function* whole(): AsyncGenerator<Buffer | string> {
    yield first;
    yield* rest;
  }
  if (looksLikeIndexFile(first) || options.unsealIndex === undefined) return decodeIndexStream(whole(), maxIndexBytes, tooLarge);
  return unsealAndDecode(await collectBytes(whole(), maxIndexBytes, tooLarge), true, options);
}

async function unsealAndDecode(stored: Buffer, isSealed: boolean, options: ReadIndexOptions): Promise<ArchiveIndex> {
  if (!isSealed) return decodeIndexFile(stored);
  if (!options.unsealIndex) throw new ArchiveInputError('the index is sealed: pass unsealIndex to read it');
  return decodeIndexFile(Buffer.from(await options.unsealIndex(stored)));
}
