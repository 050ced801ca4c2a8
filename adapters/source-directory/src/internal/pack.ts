import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Pack } from 'tar-stream';
import { aborted, describeFileError } from './errors.js';
import { readSmallFile, type FileFacts, type SmallFileRead } from './small-file-read.js';
import type { ArchiveEntry } from './walk.js';
import type { WarningList } from './warnings.js';

const CHUNK = 256 * 1024;
// Non-file entries (folders, links) queued ahead at most; files are bounded by maxConcurrentFiles.
const MAX_QUEUED_OTHERS = 256;

// Files up to this size are read whole when they are queued (opened, stated, read and closed ahead on libuv's pool,
// several at once) and written from memory; larger ones are only opened ahead and streamed in CHUNK pieces. One at a
// time, a small file was four round trips to the pool while nothing else moved: a tree of 64,000 small files took 12
// times as long as `tar | zstd` (docs/benchmarks.md, "Many small files").
const SMALL_FILE_BYTES = 64 * 1024;
// Bytes of small files read ahead and not yet written, at most (besides the one being read when the limit is hit).
const READ_AHEAD_BYTES = 2 * 1024 * 1024;
// Small files read and waiting to be written, at most.
const SMALL_FILES_AHEAD = 64;

/** A queued entry; files carry the open (large files) or the whole read (small files) started when queued. */
interface Queued {
  entry: ArchiveEntry;
  handle?: Promise<FileHandle>;
  content?: Promise<SmallFileRead>;
  /** Bytes a small file reads ahead (its size at the walk). */
  bytes: number;
}

/** What {@link writeArchive} needs. */
export interface ArchiveWriterOptions {
  maxOpenFiles: number;
  followSymlinks: boolean;
  warnings: WarningList;
  signal: AbortSignal;
}

type EntryWriter = ReturnType<Pack['entry']>;

function needsPax(...texts: (string | undefined)[]): boolean {
  // tar-stream switches to PAX for long or non-ASCII names itself, but not for a non-ASCII link target.
  return texts.some((text) => text !== undefined && Buffer.byteLength(text) !== text.length);
}

function headerOf(entry: ArchiveEntry, stats: Pick<Stats | FileFacts, 'mode' | 'mtime' | 'uid' | 'gid'>) {
  return {
    mode: stats.mode & 0o7777,
    mtime: stats.mtime,
    uid: stats.uid,
    gid: stats.gid,
    ...(needsPax(entry.linkTarget) ? { pax: {} } : {}),
  };
}

/** Adds one header-only entry and waits until tar-stream took it. */
function addEmpty(pack: Pack, header: Parameters<Pack['entry']>[0], signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return settledOrAborted(new Promise((resolve, reject) => pack.entry(header, (error) => (error ? reject(error) : resolve()))), signal);
}

/** `work`, unless the signal aborts first: a destroyed pack may never call back, and the producer must not hang. */
function settledOrAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  work.catch(() => undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted('dump'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function drained(writer: EntryWriter, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      writer.off('drain', onDrain);
      writer.off('close', onClose);
      signal.removeEventListener('abort', onClose);
    };
    const onDrain = () => (cleanup(), resolve());
    const onClose = () => (cleanup(), reject(aborted('dump')));
    writer.on('drain', onDrain);
    writer.on('close', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

/**
 * Copies exactly the size in the header: a file that shrinks while it is read is padded with zeros and one that
 * grows is cut, so the archive stays well-formed; either way a warning says the copy is not a snapshot.
 */
async function copyFile(pack: Pack, entry: ArchiveEntry, handle: FileHandle, options: ArchiveWriterOptions): Promise<void> {
  const stats = await handle.stat();
  const size = stats.size;
  let finished!: Promise<void>;
  const writer = (() => {
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    finished = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    return pack.entry({ name: entry.member, type: 'file', size, ...headerOf(entry, stats) }, (error) => (error ? reject(error) : resolve()));
  })();
  // The loop may throw (abort) before `finished` is awaited; its rejection is then expected, not unhandled.
  finished.catch(() => undefined);
  // A destroyed pack errors the entry too; the entry callback and the abort signal already report that.
  writer.on('error', () => undefined);
  let position = 0;
  let problem: string | undefined;
  while (position < size) {
    if (options.signal.aborted) throw aborted('dump');
    const length = Math.min(CHUNK, size - position);
    // Not zero-filled up front (the read overwrites it): only the padding after a failed or empty read is zeroed.
    let buffer = Buffer.allocUnsafe(length);
    let bytesRead = 0;
    if (problem === undefined) {
      try {
        ({ bytesRead } = await handle.read(buffer, 0, length, position));
        if (bytesRead === 0) problem = 'it shrank while it was read; the rest is zero-filled';
      } catch (error) {
        problem = `a read failed (${(error as Error).message}); the rest is zero-filled`;
      }
    }
    if (bytesRead > 0) buffer = buffer.subarray(0, bytesRead);
    else buffer.fill(0);
    position += buffer.length;
    if (!writer.write(buffer)) await drained(writer, options.signal);
  }
  writer.end();
  await settledOrAborted(finished, options.signal);
  if (problem) options.warnings.add(`${entry.absolute}: ${problem}`);
}

/** Adds a small file read ahead, from memory, and warns when it changed while it was read. */
async function writeSmall(pack: Pack, entry: ArchiveEntry, file: { facts: FileFacts; content: Buffer; problem?: string }, options: ArchiveWriterOptions): Promise<void> {
  options.signal.throwIfAborted();
  const header = { name: entry.member, type: 'file' as const, size: file.content.length, ...headerOf(entry, file.facts) };
  await settledOrAborted(new Promise((resolve, reject) => pack.entry(header, file.content, (error) => (error ? reject(error) : resolve()))), options.signal);
  if (file.problem) options.warnings.add(`${entry.absolute}: ${file.problem}`);
}

/**
 * Writes the entries into `pack` in order while reading ahead, so the waits for the disk overlap with writing: small
 * files are read whole (up to SMALL_FILES_AHEAD of them and READ_AHEAD_BYTES), larger ones opened (slow opens on
 * network mounts, cold caches). At most `maxOpenFiles` descriptors are open at any time, the file being written
 * included: a large file holds one from its open until it was written, a small one while it is being read. A file that
 * cannot be opened becomes a warning.
 */
export async function writeArchive(pack: Pack, entries: AsyncIterable<ArchiveEntry>, options: ArchiveWriterOptions): Promise<void> {
  const iterator = entries[Symbol.asyncIterator]();
  const queue: Queued[] = [];
  let exhausted = false;
  const flags = constants.O_RDONLY | (options.followSymlinks ? 0 : constants.O_NOFOLLOW);
  // Counted as entries are queued and written (the entry being written is out of the queue, so the limits hold with
  // it included); `reading` drops as each small file's read ends, wherever the entry is by then.
  const ahead = { largeFiles: 0, reading: 0, smallFiles: 0, bytes: 0 };
  const count = (item: Queued, sign: 1 | -1) => {
    if (item.handle) ahead.largeFiles += sign;
    if (item.content) ahead.smallFiles += sign;
    ahead.bytes += sign * item.bytes;
  };
  const hasRoom = () =>
    ahead.largeFiles + ahead.reading < options.maxOpenFiles && ahead.smallFiles < SMALL_FILES_AHEAD && ahead.bytes < READ_AHEAD_BYTES;
  const fill = async () => {
    // A directory or link needs no room, but waits behind the files before it, so the check is for every entry.
    while (!exhausted && queue.length < options.maxOpenFiles + MAX_QUEUED_OTHERS && hasRoom()) {
      const next = await iterator.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const item = queueEntry(next.value, flags);
      if (item.content) {
        ahead.reading += 1;
        // Counted down however the read ends (a failed stat or close rejects it; writeOne then fails the dump).
        const readEnded = () => (ahead.reading -= 1);
        item.content.then(readEnded, readEnded);
      }
      count(item, 1);
      queue.push(item);
    }
  };
  try {
    for (;;) {
      await fill();
      const item = queue.shift();
      if (!item) return;
      count(item, -1);
      await writeOne(pack, item, flags, options);
    }
  } finally {
    // On failure, close what was opened ahead and wait for the small files still being read (each closes its own).
    await Promise.all(queue.map(async (item) => (await item.handle?.catch(() => undefined))?.close()));
    await Promise.all(queue.map((item) => item.content?.catch(() => undefined)));
  }
}

/** Starts the read-ahead of one walked entry: the whole read of a small file, the open of a large one. */
function queueEntry(entry: ArchiveEntry, flags: number): Queued {
  if (entry.kind !== 'file') return { entry, bytes: 0 };
  if (entry.stats.size <= SMALL_FILE_BYTES) {
    const content = readSmallFile(entry.absolute, flags, SMALL_FILE_BYTES, entry.stats);
    return { entry, content, bytes: entry.stats.size };
  }
  const handle = open(entry.absolute, flags);
  handle.catch(() => undefined);
  return { entry, handle, bytes: 0 };
}

async function writeOne(pack: Pack, { entry, handle, content }: Queued, flags: number, options: ArchiveWriterOptions): Promise<void> {
  if (entry.kind === 'directory') {
    await addEmpty(pack, { name: `${entry.member}/`, type: 'directory', ...headerOf(entry, entry.stats) }, options.signal);
  } else if (entry.kind === 'symlink') {
    await addEmpty(pack, { name: entry.member, type: 'symlink', linkname: entry.linkTarget, ...headerOf(entry, entry.stats) }, options.signal);
  } else {
    let opening = handle;
    if (content) {
      const read = await content;
      if ('openError' in read) {
        options.warnings.add(`${entry.absolute}: skipped, ${describeFileError(read.openError)}`);
        return;
      }
      if (!('grown' in read)) return writeSmall(pack, entry, read, options);
      // Larger than a small file by now: streamed like any large file.
      opening = open(entry.absolute, flags);
    }
    let file: FileHandle;
    try {
      file = await opening!;
    } catch (error) {
      options.warnings.add(`${entry.absolute}: skipped, ${describeFileError(error)}`);
      return;
    }
    try {
      await copyFile(pack, entry, file, options);
    } finally {
      await file.close();
    }
  }
}
