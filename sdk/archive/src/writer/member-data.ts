import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { compressPart, partSuffix } from '../compression.js';
import { PAX } from '../format/constants.js';
import type { Compression } from '../format/index-schema.js';
import { encodeTarHeader, paddingFor, type TarHeader } from '../format/tar-header.js';
import { isAllZero, RecentMap, zeroPieces } from '../zero-runs.js';
import { GATHER_BELOW_BYTES, type ArchiveOutput } from './output.js';

/** What writing a member's data produced, for its index entry. */
export interface WrittenData {
  size: number;
  sha256: string;
  isSizeChanged: boolean;
}


/**
 * Writes a member whose size is known and that is stored uncompressed as ONE tar entry, so GNU tar extracts it as
 * the file itself. If the source delivers more or fewer bytes than declared (the file changed while it was read), the
 * content is cut or zero-padded to the declared size like GNU tar does, and the entry is flagged.
 */
export async function writeWholeMember(output: ArchiveOutput, header: TarHeader, source: Readable | AsyncIterable<Buffer>, copyChunks = false): Promise<WrittenData> {
  // Small appends are copied by the output anyway; a large chunk is handed downstream as it is unless it is a view of
  // a buffer the source reads into again.
  const appendChunk = (chunk: Buffer) => output.append(copyChunks && chunk.length >= GATHER_BELOW_BYTES ? Buffer.from(chunk) : chunk);
  await output.append(encodeTarHeader(header));
  const hash = createHash('sha256');
  let remaining = header.size;
  let isSizeChanged = false;
  for await (const received of source as AsyncIterable<Buffer | string>) {
    const chunk = Buffer.isBuffer(received) ? received : Buffer.from(received);
    if (chunk.length > remaining) {
      isSizeChanged = true;
      const head = chunk.subarray(0, remaining);
      hash.update(head);
      await appendChunk(head);
      remaining = 0;
      // Leaving the loop stops the source (a stream is destroyed, a generator returns).
      break;
    }
    hash.update(chunk);
    remaining -= chunk.length;
    await appendChunk(chunk);
  }
  if (remaining > 0) isSizeChanged = true;
  for (const zeros of zeroPieces(remaining)) {
    hash.update(zeros);
    await output.append(zeros);
  }
  await output.append(Buffer.alloc(paddingFor(header.size)));
  return { size: header.size, sha256: hash.digest('hex'), isSizeChanged };
}

/** Settings of a chunked member. */
export interface ChunkedMemberOptions {
  path: string;
  compression: Compression;
  level: number | undefined;
  chunkSize: number;
  /** Header fields shared by every part (mode, owner, mtime) and the member's HOLDFAST keys. */
  template: TarHeader;
  /** The member's expected size, if known: a small member gets a part buffer its size, not `chunkSize`. */
  sizeHint?: number;
}

/**
 * Writes a member as consecutive parts: every `chunkSize` bytes of input become one self-contained frame in its own
 * tar entry. Tar needs an entry's size before its data, and a compressed size is only known after compressing, so
 * parts keep memory bounded by the chunk size whatever the member's size. One compressed part is held back so the
 * last part can carry the member's total size and SHA-256.
 *
 * Input is copied into the part buffer as it arrives and never kept, so a source may reuse its buffer for its next
 * chunk. A part that is all zeros (a hole of a sparse file) is not compressed again: its frame is compressed once per
 * process and reused.
 */
export async function writeChunkedMember(
  output: ArchiveOutput,
  options: ChunkedMemberOptions,
  source: Readable | AsyncIterable<Buffer>,
): Promise<WrittenData> {
  const hash = createHash('sha256');
  let size = 0;
  let partNumber = 0;
  let pending: Buffer | undefined;
  const partBytes = (wanted: number) => Math.min(options.chunkSize, Math.max(MIN_PART_BUFFER_BYTES, wanted));
  let part = Buffer.allocUnsafeSlow(partBytes((options.sizeHint ?? options.chunkSize) + 1));
  let partFill = 0;

  const emitPart = async (frame: Buffer, isFinal: boolean) => {
    const pax: Record<string, string> = {
      ...options.template.pax,
      [PAX.path]: options.path,
      [PAX.part]: String(partNumber),
      [PAX.compression]: options.compression,
    };
    if (isFinal) Object.assign(pax, { [PAX.isFinal]: '1', [PAX.size]: String(size), [PAX.sha256]: hash.copy().digest('hex') });
    const name = `${options.path}.part-${String(partNumber).padStart(8, '0')}${partSuffix(options.compression)}`;
    await output.append(encodeTarHeader({ ...options.template, name, size: frame.length, pax }));
    await output.append(frame);
    await output.append(Buffer.alloc(paddingFor(frame.length)));
    partNumber += 1;
  };
  const compressPartBuffer = async () => {
    const data = part.subarray(0, partFill);
    let frame: Buffer;
    if (options.compression === 'none') {
      // The frame is the part buffer itself, held as `pending`: the next part needs a buffer of its own.
      frame = data;
      part = Buffer.allocUnsafeSlow(part.length);
    } else if (data.length === options.chunkSize && isAllZero(data)) {
      frame = await zeroFrame(options.compression, options.level, data.length);
    } else {
      frame = await compressPart(options.compression, data, options.level);
    }
    partFill = 0;
    if (pending) await emitPart(pending, false);
    pending = frame;
  };

  for await (const received of source as AsyncIterable<Buffer | string>) {
    const chunk = Buffer.isBuffer(received) ? received : Buffer.from(received);
    hash.update(chunk);
    size += chunk.length;
    for (let offset = 0; offset < chunk.length; ) {
      if (partFill === part.length) {
        // A member larger than its hint (or without one) grows its part buffer up to chunkSize.
        const grown = Buffer.allocUnsafeSlow(partBytes(part.length * 4));
        part.copy(grown, 0, 0, partFill);
        part = grown;
      }
      const copied = chunk.copy(part, partFill, offset);
      partFill += copied;
      offset += copied;
      if (partFill === options.chunkSize) await compressPartBuffer();
    }
  }
  if (partFill > 0 || pending === undefined) await compressPartBuffer();
  await emitPart(pending as Buffer, true);
  return { size, sha256: hash.digest('hex'), isSizeChanged: false };
}

const MIN_PART_BUFFER_BYTES = 16 * 1024;

// Frames of a whole part of zeros, by compression, level and length. Bounded: a process that backs up many
// zero-filled files of different lengths keeps only the most recently used frames, not one per length forever.
const zeroFrames = new RecentMap<string, Promise<Buffer>>(64);

function zeroFrame(compression: Compression, level: number | undefined, length: number): Promise<Buffer> {
  const key = `${compression}:${level ?? ''}:${length}`;
  let frame = zeroFrames.get(key);
  if (!frame) {
    frame = compressPart(compression, Buffer.alloc(length), level);
    zeroFrames.set(key, frame);
    frame.catch(() => zeroFrames.delete(key));
  }
  return frame;
}
