import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Pack } from 'tar-stream';
import { aborted } from './errors.js';
import type { ArchiveEntry } from './walk.js';
import type { WarningList } from './warnings.js';

const CHUNK = 256 * 1024;
// Non-file entries (folders, links) queued ahead at most; files are bounded by maxConcurrentFiles.
const MAX_QUEUED_OTHERS = 256;

/** A queued entry; files carry the open started when they were queued (the read-ahead). */
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

type EntryWriter = ReturnType<Pack['entry']>;

function needsPax(...texts: (string | undefined)[]): boolean {
  // tar-stream switches to PAX for long or non-ASCII names itself, but not for a non-ASCII link target.
  return texts.some((text) => text !== undefined && Buffer.byteLength(text) !== text.length);
}

function headerOf(entry: ArchiveEntry, stats: Stats) {
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

/**
 * Writes the entries into `pack` in order while opening up to `maxOpenFiles` files ahead, so slow opens (network
 * mounts, cold caches) overlap with writing. At most `maxOpenFiles` descriptors are open at any time, the file being
 * written included. A file that cannot be opened becomes a warning.
 */
export async function writeArchive(pack: Pack, entries: AsyncIterable<ArchiveEntry>, options: ArchiveWriterOptions): Promise<void> {
  const iterator = entries[Symbol.asyncIterator]();
  const queue: Queued[] = [];
  let exhausted = false;
  const flags = constants.O_RDONLY | (options.followSymlinks ? 0 : constants.O_NOFOLLOW);
  const openFiles = () => queue.filter((item) => item.handle).length;
  const fill = async () => {
    while (!exhausted && openFiles() < options.maxOpenFiles && queue.length < options.maxOpenFiles + MAX_QUEUED_OTHERS) {
      const next = await iterator.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const handle = next.value.kind === 'file' ? open(next.value.absolute, flags) : undefined;
      handle?.catch(() => undefined);
      queue.push({ entry: next.value, handle });
    }
  };
  try {
    for (;;) {
      await fill();
      const item = queue.shift();
      if (!item) return;
      await writeOne(pack, item, options);
    }
  } finally {
    // On failure, close what was opened ahead.
    await Promise.all(queue.map(async (item) => (await item.handle?.catch(() => undefined))?.close()));
  }
}

async function writeOne(pack: Pack, { entry, handle }: Queued, options: ArchiveWriterOptions): Promise<void> {
  if (entry.kind === 'directory') {
    await addEmpty(pack, { name: `${entry.member}/`, type: 'directory', ...headerOf(entry, entry.stats) }, options.signal);
  } else if (entry.kind === 'symlink') {
    await addEmpty(pack, { name: entry.member, type: 'symlink', linkname: entry.linkTarget, ...headerOf(entry, entry.stats) }, options.signal);
  } else {
    let file: FileHandle;
    try {
      file = await handle!;
    } catch (error) {
      const code = (error as { code?: string }).code;
      const reason = code === 'ENOENT' ? 'it vanished while the backup ran' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
      options.warnings.add(`${entry.absolute}: skipped, ${reason}`);
      return;
    }
    try {
      await copyFile(pack, entry, file, options);
    } finally {
      await file.close();
    }
  }
}
