import { closeSync, constants, fchmodSync, fchownSync, futimesSync, openSync, writeSync } from 'node:fs';
import { link, lstat, mkdir, open, realpath, rm, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type tar from 'tar-stream';
import { aborted, errnoOf } from './errors.js';

/** A tar header as tar-stream gives it. */
export type Header = tar.Headers;

/** Owner and permission handling of one restore. */
export interface Ownership {
  /** Restore uid/gid from the headers (only with `keepSpecialModes`, which needs root). */
  isRestored: boolean;
}

// Files up to this size are collected from the archive and written with synchronous calls on the main thread (create,
// one write, mode, times, close); larger ones are streamed in batched writes on libuv's pool.
const SMALL_FILE_BYTES = 64 * 1024;
// A large file's body pieces (the size of the restore's input pieces, 64 KiB) are gathered up to this many bytes and
// written with one `writev` on the pool while the next batch is read: one round trip to the pool per 256 KiB instead
// of one per piece. 256 KiB rather than 1 MiB: as fast, and the restore of 1 GiB of 8 MiB files peaked at 143-148 MiB
// against 149-151 (docs/benchmarks.md, "Directory restores without round trips").
const WRITE_BATCH_BYTES = 256 * 1024;
// O_CREAT | O_EXCL: never through an existing link (a file in the way is cleared and the create tried again).
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
// Parent folders remembered as checked, at most; the set starts over beyond it (tar order is depth-first, so the
// folders that matter are the recent ones).
const CHECKED_PARENTS_LIMIT = 10_000;

/**
 * Refuses to write below a path component that is a symlink. The containment rule already refuses members below a
 * symlink of the archive, and symlinks are only created at the end, so in the staging folder this never finds one:
 * it is the second lock on the door. A parent found to be a real folder is remembered for the rest of the restore,
 * so a folder of many files is checked once instead of twice per file (mkdir and realpath, two round trips to the
 * thread pool each time). Only this restore can turn a checked folder into something else, and only by removing it
 * first (an entry of another type at its path): `forgetAll()` is called then.
 */
export class ParentCheck {
  private readonly checked = new Set<string>();

  async ensure(path: string): Promise<boolean> {
    const parent = dirname(path);
    if (this.checked.has(parent)) return true;
    await mkdir(parent, { recursive: true });
    if ((await realpath(parent)) !== parent) return false;
    if (this.checked.size >= CHECKED_PARENTS_LIMIT) this.checked.clear();
    this.checked.add(parent);
    return true;
  }

  forgetAll(): void {
    this.checked.clear();
  }
}

/** Removes a non-folder at `path` so the entry can take its place (a later entry wins); a folder there goes too. */
export async function clearForFile(path: string, parents: ParentCheck): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (!existing) return;
  if (existing.isDirectory()) {
    await rm(path, { recursive: true });
    parents.forgetAll();
  } else await unlink(path);
}

/** The error of an entry whose body ended before the size its header gives. */
function endedEarly(written: number, size: number): Error {
  return new Error(`the archive entry ended after ${written} of its ${size} bytes`);
}

/** The body of an entry of `size` bytes, whole. */
async function collect(body: Readable, size: number): Promise<Buffer> {
  const content = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const piece of body) {
    if (filled + (piece as Buffer).length > size) throw new Error(`the archive entry holds more than its ${size} bytes`);
    (piece as Buffer).copy(content, filled);
    filled += (piece as Buffer).length;
  }
  if (filled !== size) throw endedEarly(filled, size);
  return content;
}

/** True for a regular file small enough to be written in one piece, with synchronous calls. */
function isSmallFile(header: Header): boolean {
  return (header.type === 'file' || header.type === 'contiguous-file') && (header.size ?? 0) <= SMALL_FILE_BYTES;
}

/** What {@link writeFileEntry} needs besides the entry. */
export interface FileWrite {
  path: string;
  mode: number;
  header: Header;
  body: Readable;
  parents: ParentCheck;
  ownership: Ownership;
  signal: AbortSignal;
  /** Large files too with synchronous writes (the extractor's own process, where no event loop waits on them). */
  blocking?: boolean;
}

/** Owner (when restored) before mode, then times, on an open descriptor: no path lookups, no round trips. */
function finishSync(fd: number, { mode, header, ownership }: Pick<FileWrite, 'mode' | 'header' | 'ownership'>, mtime: Date): void {
  if (ownership.isRestored) fchownSync(fd, header.uid ?? 0, header.gid ?? 0);
  fchmodSync(fd, mode);
  futimesSync(fd, mtime, mtime);
}

/** Writes all of `content` at `position` of `fd` (a short write goes on from where it stopped). */
function writeAllSync(fd: number, content: Buffer, position: number): void {
  for (let done = 0; done < content.length; ) done += writeSync(fd, content, done, content.length - done, position + done);
}

/**
 * A small file with synchronous calls on the calling thread: create (O_EXCL), one write, owner, mode, times, close.
 * Each of those as a round trip to libuv's pool cost the main thread 35-50 us (the thread switch more than the call):
 * 44,000 files of a 0-24 KiB tree took 17 CPU s to restore into tmpfs against 1.6 s for `tar -x` (docs/benchmarks.md,
 * "Directory restores without round trips"). Something in the way (EEXIST) is cleared asynchronously first.
 */
async function writeSmallFile(file: FileWrite, content: Buffer, mtime: Date): Promise<void> {
  let fd: number;
  try {
    fd = openSync(file.path, CREATE_FLAGS, 0o600);
  } catch (error) {
    // The staging folder starts empty: asking first (lstat) would cost every file a call and an error.
    if (errnoOf(error) !== 'EEXIST') throw error;
    await clearForFile(file.path, file.parents);
    fd = openSync(file.path, CREATE_FLAGS, 0o600);
  }
  try {
    writeAllSync(fd, content, 0);
    finishSync(fd, file, mtime);
  } finally {
    closeSync(fd);
  }
}

/** Writes `pieces` at `position` with one writev; a short write (rare for regular files) goes on with the rest. */
async function writeBatch(handle: FileHandle, pieces: Buffer[], position: number): Promise<void> {
  const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
  const { bytesWritten } = await handle.writev(pieces, position);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(pieces).subarray(bytesWritten);
  for (let done = 0; done < rest.length; ) done += (await handle.write(rest, done, rest.length - done, position + bytesWritten + done)).bytesWritten;
}

/**
 * A large file: its body pieces gathered into batches of 256 KiB, each written with one `writev` while the next
 * batch is read (one write in flight), then owner, mode and times on the handle. A body longer than its header says
 * fails (tar-stream never hands one on; checked all the same, as the bytes are counted anyway).
 */
async function writeLargeFile(file: FileWrite, mtime: Date): Promise<void> {
  await clearForFile(file.path, file.parents);
  const handle = await open(file.path, CREATE_FLAGS, 0o600);
  let writing: Promise<void> | undefined;
  try {
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let position = 0;
    const flush = async () => {
      await writing;
      writing = writeBatch(handle, batch, position);
      // Rejections are taken by the next await of `writing`; until then they must not count as unhandled.
      writing.catch(() => undefined);
      position += batchBytes;
      batch = [];
      batchBytes = 0;
    };
    for await (const piece of file.body) {
      if (file.signal.aborted) throw aborted('restore');
      batch.push(piece as Buffer);
      batchBytes += (piece as Buffer).length;
      if (batchBytes >= WRITE_BATCH_BYTES) await flush();
    }
    if (batchBytes > 0) await flush();
    await writing;
    if (position !== (file.header.size ?? 0)) throw endedEarly(position, file.header.size ?? 0);
    if (file.ownership.isRestored) await handle.chown(file.header.uid ?? 0, file.header.gid ?? 0);
    await handle.chmod(file.mode);
    await handle.utimes(mtime, mtime);
  } finally {
    await writing?.catch(() => undefined);
    await handle.close();
  }
}

/**
 * A large file with a synchronous write per body piece as it arrives, in a process of its own: the batched writes
 * on the pool above left the extractor's thread waiting for each batch (half its time idle in a profile).
 */
async function writeLargeFileBlocking(file: FileWrite, mtime: Date): Promise<void> {
  await clearForFile(file.path, file.parents);
  const fd = openSync(file.path, CREATE_FLAGS, 0o600);
  try {
    let position = 0;
    for await (const piece of file.body) {
      if (file.signal.aborted) throw aborted('restore');
      writeAllSync(fd, piece as Buffer, position);
      position += (piece as Buffer).length;
    }
    if (position !== (file.header.size ?? 0)) throw endedEarly(position, file.header.size ?? 0);
    finishSync(fd, file, mtime);
  } finally {
    closeSync(fd);
  }
}

/** Writes a regular file: small ones with synchronous calls, larger ones in batched writes. Owner before mode. */
export async function writeFileEntry(file: FileWrite): Promise<void> {
  const mtime = file.header.mtime ?? new Date();
  if (isSmallFile(file.header)) return writeSmallFile(file, await collect(file.body, file.header.size ?? 0), mtime);
  return file.blocking ? writeLargeFileBlocking(file, mtime) : writeLargeFile(file, mtime);
}

/** Creates a folder, replacing a non-folder at its path. Its mode and times are applied at the end. */
export async function writeFolderEntry(path: string): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (existing && !existing.isDirectory()) await unlink(path);
  await mkdir(path, { recursive: true });
}

/**
 * Creates a hard link to a file this restore wrote (in the staging folder, so nothing else is there); `undefined`
 * when it is not there as a regular file, which the caller names as refused.
 */
export async function writeHardLink(path: string, target: string, parents: ParentCheck): Promise<boolean> {
  const linked = await lstat(target).catch(() => undefined);
  if (!linked?.isFile() || (await realpath(dirname(target))) !== dirname(target)) return false;
  await clearForFile(path, parents);
  await link(target, path);
  return true;
}
