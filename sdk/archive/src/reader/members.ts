import { createHash } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { createPartsDecompressor, decompressFrame } from '../compression.js';
import { ArchiveFormatError, ArchiveIntegrityError } from '../errors.js';
import { PAX, TRAILER_PATH } from '../format/constants.js';
import { compressionSchema, type Compression, type EntryKind } from '../format/index-schema.js';
import { normalizeArchivePath } from '../format/paths.js';
import { TYPE_FLAG, type TarHeader } from '../format/tar-header.js';
import type { ByteReader } from './byte-reader.js';
import { collectBytes } from './collect-bytes.js';
import { ZeroFrameMemory, zeroPieces } from '../zero-runs.js';
import { readTarEntries, type RawTarEntry } from './tar-entries.js';

/** One logical member: a whole entry, or all parts of a chunked one joined and decompressed. */
export interface ArchiveMember {
  kind: EntryKind | 'format';
  /** Normalised archive path (for a format member: its tar name). */
  path: string;
  header: TarHeader;
  offset: number;
  /** 'manifest', 'index' or 'trailer' for the format's own members. */
  role?: string;
  database?: string;
  compression: Compression;
  /** Symlink target, or the hard link's target path. */
  target?: string;
  /** The uncompressed content. Read it whole or not at all; parts left unread are skipped. */
  data(): AsyncIterable<Buffer>;
}

/** Groups tar entries into members; used by the extractor (whole stream) and by range reads (one member). */
export async function* readMembers(reader: ByteReader): AsyncGenerator<ArchiveMember> {
  const entries = readTarEntries(reader)[Symbol.asyncIterator]();
  for (;;) {
    const next = await entries.next();
    if (next.done) return;
    const entry = next.value;
    const { header } = entry;
    const role = header.name === TRAILER_PATH ? 'trailer' : header.pax[PAX.role];
    if (role !== undefined) {
      yield { ...common(entry, 'format', header.name, 'none'), role, data: () => entry.body() };
      continue;
    }
    if (header.typeFlag === TYPE_FLAG.directory) {
      yield { ...common(entry, 'directory', header.name, 'none'), data: emptyData };
    } else if (header.typeFlag === TYPE_FLAG.symlink) {
      yield { ...common(entry, 'symlink', header.name, 'none'), target: header.linkName, data: emptyData };
    } else if (header.typeFlag === TYPE_FLAG.hardlink) {
      yield { ...common(entry, 'hardlink', header.name, 'none'), target: normalizeArchivePath(header.linkName), data: emptyData };
    } else if (header.pax[PAX.part] !== undefined) {
      yield* chunkedMember(entry, entries);
    } else {
      yield { ...common(entry, kindOf(header), header.name, 'none'), data: () => entry.body() };
    }
  }
}

async function* chunkedMember(first: RawTarEntry, entries: AsyncIterator<RawTarEntry>): AsyncGenerator<ArchiveMember> {
  const path = first.header.pax[PAX.path] ?? '';
  const compression = parseCompression(first.header.pax[PAX.compression], first.offset);
  if (first.header.pax[PAX.part] !== '0') {
    throw new ArchiveFormatError(`part ${first.header.pax[PAX.part]} of "${path}" at byte ${first.offset} has no part 0 before it`);
  }
  let finalPart: TarHeader | undefined;
  let isStarted = false;
  // Whole parts (each a complete frame) for decoders that take one frame at a time; otherwise the bytes as they come.
  async function* frames(isWholeParts: boolean): AsyncGenerator<Buffer> {
    isStarted = true;
    let entry = first;
    for (let part = 0; ; part += 1) {
      if (entry.header.pax[PAX.path] !== path || entry.header.pax[PAX.part] !== String(part)) {
        throw new ArchiveFormatError(`expected part ${part} of "${path}" at byte ${entry.offset}, found "${entry.header.name}"`);
      }
      if (isWholeParts) yield await collectBytes(entry.body(), entry.header.size);
      else yield* entry.body();
      if (entry.header.pax[PAX.isFinal] === '1') {
        finalPart = entry.header;
        return;
      }
      const next = await entries.next();
      if (next.done) throw new ArchiveFormatError(`the archive ends inside "${path}" (after part ${part})`);
      entry = next.value;
    }
  }
  const data = async function* (): AsyncGenerator<Buffer> {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of decompress(compression, frames, path)) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
    const expectedSize = finalPart?.pax[PAX.size];
    const expectedSha = finalPart?.pax[PAX.sha256];
    if (String(size) !== expectedSize || hash.digest('hex') !== expectedSha) {
      throw new ArchiveIntegrityError(`content of "${path}" does not match its recorded size and SHA-256`);
    }
  };
  yield { ...common(first, kindOf(first.header), path, compression), data };
  if (!isStarted) for await (const frame of frames(false)) void frame;
  else if (!finalPart) throw new ArchiveFormatError(`the content of "${path}" was not read to its end`);
}

function common(entry: RawTarEntry, kind: ArchiveMember['kind'], rawPath: string, compression: Compression) {
  const database = entry.header.pax[PAX.database];
  const path = kind === 'format' ? rawPath : normalizeArchivePath(rawPath);
  return { kind, path, header: entry.header, offset: entry.offset, compression, ...(database !== undefined ? { database } : {}) };
}

function kindOf(header: TarHeader): EntryKind {
  return header.pax[PAX.kind] === 'database-dump' ? 'database-dump' : 'file';
}

function parseCompression(value: string | undefined, offset: number): Compression {
  const parsed = compressionSchema.safeParse(value);
  if (!parsed.success) throw new ArchiveFormatError(`unknown compression "${value}" in the member at byte ${offset}`);
  return parsed.data;
}

async function* emptyData(): AsyncGenerator<Buffer> {}

function decompress(compression: Compression, frames: (isWholeParts: boolean) => AsyncIterable<Buffer>, path: string): AsyncIterable<Buffer> {
  if (compression === 'none') return frames(false);
  if (compression === 'zstd') return zstdParts(frames(true), path);
  // pipeline() destroys both streams on failure, so a corrupt frame surfaces as an error of the iteration.
  return pipeline(Readable.from(frames(false)), createPartsDecompressor(compression), () => undefined);
}

/**
 * zstd parts are decoded one whole frame at a time with the binding's shared context. A streaming decoder per member
 * costs a native context that lives until the garbage collector finds its wrapper, plus a 128 KiB output buffer per
 * call: restoring 50,000 small files piled up tens of MiB that way.
 */
async function* zstdParts(parts: AsyncIterable<Buffer>, path: string): AsyncGenerator<Buffer> {
  for await (const part of parts) {
    const zeroRun = zeroFrames.lengthOf(part);
    if (zeroRun !== undefined) {
      yield* zeroPieces(zeroRun);
      continue;
    }
    let content: Buffer;
    try {
      content = decompressFrame(part);
    } catch (error) {
      throw new ArchiveIntegrityError(`a zstd part of "${path}" does not decompress: ${(error as Error).message}`);
    }
    zeroFrames.learn(part, content);
    if (content.length > 0) yield content;
  }
}

// Shared by every read of the process: the frames of a hole look the same in every archive written by this library.
const zeroFrames = new ZeroFrameMemory();
