import { createWriteStream } from 'node:fs';
import { chmod, chown, link, lstat, mkdir, open, realpath, rm, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type tar from 'tar-stream';
import { errnoOf } from './errors.js';
import type { ConcurrentWrites } from './concurrent-writes.js';

/** A tar header as tar-stream gives it. */
export type Header = tar.Headers;

/** Owner and permission handling of one restore. */
export interface Ownership {
  /** Restore uid/gid from the headers (only with `keepSpecialModes`, which needs root). */
  isRestored: boolean;
}

// Files up to this size are collected from the archive and written with one write on a handle that also sets their
// mode and times; larger ones are streamed.
const SMALL_FILE_BYTES = 64 * 1024;
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

/** Creates `path` (never through an existing link: O_EXCL), replacing whatever is there (a later entry wins). */
async function createFile(path: string, parents: ParentCheck): Promise<FileHandle> {
  try {
    return await open(path, 'wx', 0o600);
  } catch (error) {
    // The staging folder starts empty: asking first (lstat) would cost every file a round trip and an error.
    if (errnoOf(error) !== 'EEXIST') throw error;
    await clearForFile(path, parents);
    return open(path, 'wx', 0o600);
  }
}

/** The body of an entry of `size` bytes, whole. */
async function collect(body: Readable, size: number): Promise<Buffer> {
  const content = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const piece of body) {
    (piece as Buffer).copy(content, filled);
    filled += (piece as Buffer).length;
  }
  if (filled !== size) throw new Error(`the archive entry ended after ${filled} of its ${size} bytes`);
  return content;
}

/** True for a regular file small enough to be written in one piece, several at once. */
export function isSmallFile(header: Header): boolean {
  return (header.type === 'file' || header.type === 'contiguous-file') && (header.size ?? 0) <= SMALL_FILE_BYTES;
}

/** What {@link writeFileEntry} needs besides the entry. */
export interface FileWrite {
  path: string;
  mode: number;
  header: Header;
  body: Readable;
  parents: ParentCheck;
  writes: ConcurrentWrites;
  ownership: Ownership;
  signal: AbortSignal;
}

/** Writes a regular file: small ones in one piece (several at once), larger ones streamed. Owner before mode. */
export async function writeFileEntry({ path, mode, header, body, parents, writes, ownership, signal }: FileWrite): Promise<void> {
  const mtime = header.mtime ?? new Date();
  if (isSmallFile(header)) {
    const content = await collect(body, header.size ?? 0);
    await writes.start(path, async () => {
      const handle = await createFile(path, parents);
      try {
        await handle.writeFile(content);
        if (ownership.isRestored) await handle.chown(header.uid ?? 0, header.gid ?? 0);
        await handle.chmod(mode);
        await handle.utimes(mtime, mtime);
      } finally {
        await handle.close();
      }
    });
    return;
  }
  await clearForFile(path, parents);
  await pipeline(body, createWriteStream(path, { flags: 'wx', mode: 0o600 }), { signal });
  if (ownership.isRestored) await chown(path, header.uid ?? 0, header.gid ?? 0);
  await chmod(path, mode);
  await utimes(path, mtime, mtime);
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
