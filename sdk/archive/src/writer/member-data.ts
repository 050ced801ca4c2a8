import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { compressPart, partSuffix } from '../compression.js';
import { PAX } from '../format/constants.js';
import type { Compression } from '../format/index-schema.js';
import { encodeTarHeader, paddingFor, type TarHeader } from '../format/tar-header.js';
import type { ArchiveOutput } from './output.js';

/** What writing a member's data produced, for its index entry. */
export interface WrittenData {
  size: number;
  sha256: string;
  isSizeChanged: boolean;
}

const ZEROS = Buffer.alloc(64 * 1024);

/**
 * Writes a member whose size is known and that is stored uncompressed as ONE tar entry, so GNU tar extracts it as
 * the file itself. If the source delivers more or fewer bytes than declared (the file changed while it was read), the
 * content is cut or zero-padded to the declared size like GNU tar does, and the entry is flagged.
 */
export async function writeWholeMember(output: ArchiveOutput, header: TarHeader, source: Readable): Promise<WrittenData> {
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
      await output.append(head);
      remaining = 0;
      source.destroy();
      break;
    }
    hash.update(chunk);
    remaining -= chunk.length;
    await output.append(chunk);
  }
  if (remaining > 0) isSizeChanged = true;
  while (remaining > 0) {
    const zeros = ZEROS.subarray(0, Math.min(remaining, ZEROS.length));
    hash.update(zeros);
    remaining -= zeros.length;
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
}

/**
 * Writes a member as consecutive parts: every `chunkSize` bytes of input become one self-contained frame in its own
 * tar entry. Tar needs an entry's size before its data, and a compressed size is only known after compressing, so
 * parts keep memory bounded by the chunk size whatever the member's size. One compressed part is held back so the
 * last part can carry the member's total size and SHA-256.
 */
export async function writeChunkedMember(
  output: ArchiveOutput,
  options: ChunkedMemberOptions,
  source: Readable,
): Promise<WrittenData> {
  const hash = createHash('sha256');
  let size = 0;
  let partNumber = 0;
  let pending: Buffer | undefined;
  let buffered: Buffer[] = [];
  let bufferedLength = 0;

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
  const compressChunk = async (chunk: Buffer) => {
    const frame = await compressPart(options.compression, chunk, options.level);
    if (pending) await emitPart(pending, false);
    pending = frame;
  };

  for await (const received of source as AsyncIterable<Buffer | string>) {
    const chunk = Buffer.isBuffer(received) ? received : Buffer.from(received);
    hash.update(chunk);
    size += chunk.length;
    buffered.push(chunk);
    bufferedLength += chunk.length;
    while (bufferedLength >= options.chunkSize) {
      // A read the size of a part (a large file read in 1 MiB pieces) is compressed as it is: no copy of every MiB.
      const joined = buffered.length === 1 ? (buffered[0] as Buffer) : Buffer.concat(buffered, bufferedLength);
      await compressChunk(joined.subarray(0, options.chunkSize));
      buffered = [joined.subarray(options.chunkSize)];
      bufferedLength -= options.chunkSize;
    }
  }
  if (bufferedLength > 0 || pending === undefined) await compressChunk(Buffer.concat(buffered, bufferedLength));
  await emitPart(pending as Buffer, true);
  return { size, sha256: hash.digest('hex'), isSizeChanged: false };
}
