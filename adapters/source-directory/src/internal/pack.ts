import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { describeFileError } from './errors.js';
import { addSmallFile } from './small-file-read.js';
import { encodeHeader, paddingOf, type TarHeader } from './tar-header.js';
import { BODY_CHUNK_BYTES, type TarOutput } from './tar-output.js';
import type { ArchiveEntry } from './walk.js';
import type { WarningList } from './warnings.js';

// A large file is read in pieces of at least this much (up to the rest of the tar's chunk), straight into the chunk.
const MIN_READ = 64 * 1024;
// Non-file entries (folders, links) queued ahead at most; large files are bounded by maxConcurrentFiles.
const MAX_QUEUED_OTHERS = 256;
// Files up to this size are read whole with synchronous calls when they are written (small-file-read.ts); larger ones
// are opened ahead on libuv's pool and streamed.
export const SMALL_FILE_BYTES = 64 * 1024;
// The writer yields to the event loop after this long (timers, HTTP requests and the engine's pipeline go on): with
// synchronous reads of small files nothing else would run between two chunks handed on.
const YIELD_AFTER_MS = 2;

/** A queued entry; a large file carries the open started when it was queued. */
interface Queued {
  entry: ArchiveEntry;
  handle?: Promise<FileHandle>;
}

/** What {@link writeArchive} needs. */
export interface ArchiveWriterOptions {
  maxOpenFiles: number;
  followSymlinks: boolean;
  warnings: WarningList;
  signal: AbortSignal;
}

function needsPax(...texts: (string | undefined)[]): boolean {
  // tar-stream switches to PAX for long or non-ASCII names itself, but not for a non-ASCII link target.
  return texts.some((text) => text !== undefined && Buffer.byteLength(text) !== text.length);
}

/** The header facts of an entry: its mode bits, time and owner (and a PAX header for a non-ASCII link target). */
export function headerOf(entry: ArchiveEntry, stats: Pick<Stats, 'mode' | 'mtime' | 'uid' | 'gid'>): Omit<TarHeader, 'name' | 'type' | 'size'> {
  return {
    mode: stats.mode & 0o7777,
    mtime: stats.mtime,
    uid: stats.uid,
    gid: stats.gid,
    ...(needsPax(entry.linkTarget) ? { pax: {} } : {}),
  };
}

/** A rejection as an Error (a file system call always rejects with one; anything else is wrapped, not counted). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * What one read of a large file's body came to (the bytes read, or its error; 0 once a problem stopped the reads): the
 * bytes to count and the problem, if any. A failed or empty read zero-fills the piece, so the body keeps the size in
 * its header. Shared by both writers (here and sync-pack.ts), which must write the same bytes.
 */
export function settlePiece(buffer: Buffer, offset: number, length: number, read: number | Error, problem: string | undefined): { bytes: number; problem: string | undefined } {
  let bytes = 0;
  if (problem === undefined) {
    if (read instanceof Error) problem = `a read failed (${read.message}); the rest is zero-filled`;
    else if (read === 0) problem = 'it shrank while it was read; the rest is zero-filled';
    else bytes = read;
  }
  if (bytes === 0) {
    buffer.fill(0, offset, offset + length);
    bytes = length;
  }
  return { bytes, problem };
}

/**
 * Copies exactly the size in the header: a file that shrinks while it is read is padded with zeros and one that
 * grows is cut, so the archive stays well-formed; either way a warning says the copy is not a snapshot.
 */
async function copyFile(out: TarOutput, entry: ArchiveEntry, handle: FileHandle, options: ArchiveWriterOptions): Promise<void> {
  const stats = await handle.stat();
  const size = stats.size;
  out.append(encodeHeader({ name: entry.member, type: 'file', size, ...headerOf(entry, stats) }));
  let position = 0;
  let problem: string | undefined;
  while (position < size) {
    await out.ready();
    // Read straight into the tar's chunk: not zero-filled up front, only the padding after a failed or empty read is.
    // The first piece fills the chunk that holds the header; the rest go into body-sized chunks (tar-output.ts).
    const { buffer, offset, room } = out.reserve(Math.min(MIN_READ, size - position), BODY_CHUNK_BYTES);
    const length = Math.min(room, size - position);
    const read = problem === undefined ? await handle.read(buffer, offset, length, position).then(({ bytesRead }) => bytesRead, (error: unknown) => asError(error)) : 0;
    const piece = settlePiece(buffer, offset, length, read, problem);
    problem = piece.problem;
    out.commit(piece.bytes);
    position += piece.bytes;
  }
  out.zeros(paddingOf(size));
  if (problem) options.warnings.add(`${entry.absolute}: ${problem}`);
}

/**
 * Writes the entries into `out` in order. Small files are read with synchronous calls when their turn comes; larger
 * ones are opened ahead (slow opens on network mounts, cold caches), at most `maxOpenFiles` descriptors at a time, the
 * file being written included. A file that cannot be opened becomes a warning. The writer waits while the reader is
 * behind and yields to the event loop every few milliseconds.
 */
export async function writeArchive(out: TarOutput, entries: Iterable<ArchiveEntry> | AsyncIterable<ArchiveEntry>, options: ArchiveWriterOptions): Promise<void> {
  // A synchronous walk (walk.ts) is iterated without a promise per entry.
  const iterator: Iterator<ArchiveEntry> | AsyncIterator<ArchiveEntry> = Symbol.asyncIterator in entries ? entries[Symbol.asyncIterator]() : entries[Symbol.iterator]();
  const queue: Queued[] = [];
  let exhausted = false;
  const flags = constants.O_RDONLY | (options.followSymlinks ? 0 : constants.O_NOFOLLOW);
  let largeFilesAhead = 0;
  const hasRoom = () =>
    // Large files opened ahead and the file being written stay within maxOpenFiles (one may be queued when nothing is).
    // A directory or link needs no descriptor, but waits behind the files before it, so the check is for every entry.
    !exhausted && queue.length < options.maxOpenFiles + MAX_QUEUED_OTHERS && (largeFilesAhead < options.maxOpenFiles - 1 || queue.length === 0);
  const take = (next: IteratorResult<ArchiveEntry>) => {
    if (next.done) {
      exhausted = true;
      return;
    }
    const item = queueEntry(next.value, flags);
    if (item.handle) largeFilesAhead += 1;
    queue.push(item);
  };
  // Queues entries while there is room; a promise only when the walk is asynchronous and has to be waited for.
  const fill = (): Promise<void> | undefined => {
    while (hasRoom()) {
      const pending = iterator.next();
      if (pending instanceof Promise) return pending.then((next) => (take(next), fill()));
      take(pending);
    }
    return undefined;
  };
  let sliceStarted = performance.now();
  try {
    for (;;) {
      const filling = fill();
      if (filling) await filling;
      const item = queue.shift();
      if (!item) return;
      if (item.handle) largeFilesAhead -= 1;
      // Folders, links and small files are written without a promise; only a large file's copy is awaited.
      const copying = writeOne(out, item, flags, options);
      if (copying) await copying;
      if (out.waiting) await out.ready();
      if (performance.now() - sliceStarted > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
  } finally {
    // On failure, close what was opened ahead.
    await Promise.all(queue.map(async (item) => (await item.handle?.catch(() => undefined))?.close()));
  }
}

/** Starts the open of a large file as it is queued; other entries are queued as they are. */
function queueEntry(entry: ArchiveEntry, flags: number): Queued {
  if (entry.kind !== 'file' || entry.stats.size <= SMALL_FILE_BYTES) return { entry };
  const handle = open(entry.absolute, flags);
  handle.catch(() => undefined);
  return { entry, handle };
}

/** Writes one entry; answers the copy of a large file to wait for, or nothing when the entry is written already. */
function writeOne(out: TarOutput, { entry, handle }: Queued, flags: number, options: ArchiveWriterOptions): Promise<void> | undefined {
  if (entry.kind === 'directory') {
    out.append(encodeHeader({ name: `${entry.member}/`, type: 'directory', size: 0, ...headerOf(entry, entry.stats) }));
    return undefined;
  }
  if (entry.kind === 'symlink') {
    out.append(encodeHeader({ name: entry.member, type: 'symlink', size: 0, linkname: entry.linkTarget, ...headerOf(entry, entry.stats) }));
    return undefined;
  }
  if (handle) return streamFile(out, entry, handle, options);
  const facts = (stats: Pick<Stats, 'mode' | 'mtime' | 'uid' | 'gid'>) => headerOf(entry, stats);
  if (addSmallFile(out, entry, flags, SMALL_FILE_BYTES, facts, options.warnings) === 'added') return undefined;
  // Larger than a small file by now: streamed like any large file.
  return streamFile(out, entry, open(entry.absolute, flags), options);
}

/** Copies a large file once its open (started ahead) succeeded; a failed open is a warning. */
async function streamFile(out: TarOutput, entry: ArchiveEntry, opening: Promise<FileHandle>, options: ArchiveWriterOptions): Promise<void> {
  let file: FileHandle;
  try {
    file = await opening;
  } catch (error) {
    options.warnings.add(`${entry.absolute}: skipped, ${describeFileError(error)}`);
    return;
  }
  try {
    await copyFile(out, entry, file, options);
  } finally {
    await file.close();
  }
}
