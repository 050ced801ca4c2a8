import { createWriteStream } from 'node:fs';
import { chmod, link, lstat, lutimes, mkdir, open, realpath, rm, symlink, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { AdapterError, type RestoreResult } from '@holdfast/sdk';
import { DIRECTORY_ORIGIN, aborted, errnoOf, toAdapterError } from './errors.js';
import { ConcurrentWrites } from './concurrent-writes.js';
import { locateMember, type MemberLocation, type RestoreDestination } from './restore-destination.js';
import { safeLinkTarget, safeMemberPath } from './safe-paths.js';
import { WarningList } from './warnings.js';

type Header = tar.Headers;

/** Folder modes and times are applied last: creating children changes a folder's mtime, and 0555 would block them. */
interface PendingFolder {
  path: string;
  mode: number;
  mtime: Date;
}

// Files up to this size are collected from the archive and written with one write on a handle that also sets their
// mode and times; larger ones are streamed.
const SMALL_FILE_BYTES = 64 * 1024;
// Small files written at once (libuv's thread pool has four threads unless UV_THREADPOOL_SIZE says otherwise).
const WRITE_LANES = 4;
// Parent folders remembered as checked, at most; the set starts over beyond it (tar order is depth-first, so the
// folders that matter are the recent ones).
const CHECKED_PARENTS_LIMIT = 10_000;

/**
 * Refuses to write below a path component that is a symlink: a crafted earlier entry could redirect it outside. A
 * parent found to be a real folder is remembered for the rest of the restore, so a folder of many files is checked
 * once instead of twice per file (mkdir and realpath, two round trips to the thread pool each time). Only this
 * restore can turn a checked folder into something else, and only by removing it first (an entry of another type
 * at its path): `forgetAll()` is called then.
 */
class ParentCheck {
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

/** Removes a non-folder at `path` so the entry can take its place (a restore overwrites); a folder there goes too. */
async function clearForFile(path: string, parents: ParentCheck): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (!existing) return;
  if (existing.isDirectory()) {
    await rm(path, { recursive: true });
    parents.forgetAll();
  } else await unlink(path);
}

/** Creates `path` (never through an existing link: O_EXCL), replacing whatever is there (a restore overwrites). */
async function createFile(path: string, parents: ParentCheck): Promise<FileHandle> {
  try {
    return await open(path, 'wx', 0o600);
  } catch (error) {
    // Most restores go into an empty folder: asking first (lstat) would cost every file a round trip and an error.
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

/** Writes a small file in one piece and sets its mode and times on the same handle. */
async function writeSmallFile(path: string, content: Buffer, mode: number, mtime: Date, parents: ParentCheck): Promise<void> {
  const handle = await createFile(path, parents);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
    await handle.utimes(mtime, mtime);
  } finally {
    await handle.close();
  }
}

/** Resolves a hard link's target member to a file path, or the reason it is refused. */
type LinkResolver = (memberName: string) => { path: string } | { refused: string };

/** What writeEntry works with besides the entry: the state of the whole restore. */
interface RestoreState {
  folders: PendingFolder[];
  warnings: WarningList;
  resolveLink: LinkResolver;
  parents: ParentCheck;
  writes: ConcurrentWrites;
  signal: AbortSignal;
}

function isSmallFile(header: Header): boolean {
  return (header.type === 'file' || header.type === 'contiguous-file') && (header.size ?? 0) <= SMALL_FILE_BYTES;
}

async function writeEntry(location: MemberLocation, header: Header, body: Readable, state: RestoreState): Promise<void> {
  const { folders, warnings, resolveLink, parents, writes, signal } = state;
  const { root, relative } = location;
  const path = join(root, relative);
  // Small files are written several at once; anything else waits until they are on disk, so links, folders and
  // replacements see the tree as it would be one entry at a time (and a symlink entry forgets the checked parents
  // before any later entry is checked).
  const small = isSmallFile(header);
  if (!small) await writes.drain();
  if (!(await parents.ensure(path))) {
    warnings.add(`${header.name}: refused, a parent folder is a symlink`);
    return;
  }
  const mode = (header.mode ?? 0o644) & 0o7777;
  const mtime = header.mtime ?? new Date();
  switch (header.type) {
    case 'directory': {
      const existing = await lstat(path).catch(() => undefined);
      if (existing && !existing.isDirectory()) await unlink(path);
      await mkdir(path, { recursive: true });
      folders.push({ path, mode, mtime });
      return;
    }
    case 'file':
    case 'contiguous-file': {
      if (small) {
        const content = await collect(body, header.size ?? 0);
        await writes.start(path, () => writeSmallFile(path, content, mode, mtime, parents));
        return;
      }
      await clearForFile(path, parents);
      await pipeline(body, createWriteStream(path, { flags: 'wx', mode: 0o600 }), { signal });
      await chmod(path, mode);
      await utimes(path, mtime, mtime);
      return;
    }
    case 'symlink': {
      const check = safeLinkTarget(relative, header.linkname ?? '');
      if ('refused' in check) {
        warnings.add(`${header.name}: symlink refused, ${check.refused}`);
        return;
      }
      await clearForFile(path, parents);
      await symlink(header.linkname!, path);
      await lutimes(path, mtime, mtime);
      return;
    }
    case 'link': {
      const target = resolveLink(header.linkname ?? '');
      if ('refused' in target) {
        warnings.add(`${header.name}: hard link refused, ${target.refused}`);
        return;
      }
      await clearForFile(path, parents);
      await link(target.path, path);
      return;
    }
    default:
      warnings.add(`${header.name}: skipped, entries of type ${String(header.type)} are not restored`);
  }
}

async function feed(input: Readable, extract: tar.Extract, signal: AbortSignal): Promise<void> {
  try {
    for await (const chunk of input) {
      if (signal.aborted) throw aborted('restore');
      if (!extract.write(chunk as Buffer)) await new Promise((resolve) => extract.once('drain', resolve));
    }
    extract.end();
  } catch (error) {
    extract.destroy(error as Error);
  }
}

/**
 * Extracts a tar stream below a folder, or each archived root back to its original path. Member names that are
 * absolute or contain `..`, symlinks pointing outside their root, and entries below a symlinked folder are refused
 * with a warning; nothing is written outside the destination. Modes and mtimes are restored; ownership is not
 * (files belong to the user running Holdfast).
 */
export async function restoreArchive(input: Readable, destination: RestoreDestination, signal: AbortSignal): Promise<RestoreResult> {
  let folderRoot = '';
  if (destination.kind === 'folder') {
    await mkdir(destination.path, { recursive: true });
    folderRoot = await realpath(destination.path);
  }
  const locate = (memberPath: string, isDirectory: boolean) => locateMember(destination, memberPath, isDirectory, folderRoot);
  const resolveLink: LinkResolver = (name) => {
    const member = safeMemberPath(name);
    if ('refused' in member) return member;
    const location = locate(member.path, false);
    return 'refused' in location ? location : { path: join(location.root, location.relative) };
  };
  const where = destination.kind === 'folder' ? folderRoot : 'the original paths';
  const warnings = new WarningList();
  const folders: PendingFolder[] = [];
  const state: RestoreState = { folders, warnings, resolveLink, parents: new ParentCheck(), writes: new ConcurrentWrites(WRITE_LANES), signal };
  const extract = tar.extract();
  const feeding = feed(input, extract, signal);
  let entries = 0;
  try {
    for await (const entry of extract) {
      if (signal.aborted) throw aborted('restore');
      entries++;
      const member = safeMemberPath(entry.header.name);
      const location = 'refused' in member ? member : locate(member.path, entry.header.type === 'directory');
      if ('refused' in location) {
        warnings.add(`${entry.header.name}: refused, ${location.refused}`);
      } else {
        await writeEntry(location, entry.header, entry as unknown as Readable, state);
      }
      entry.resume();
    }
    await state.writes.drain();
  } catch (error) {
    // Nothing goes on writing after the restore answered.
    await state.writes.drain().catch(() => undefined);
    input.destroy();
    if (signal.aborted || errnoOf(error) === 'ABORT_ERR') throw aborted('restore');
    throw toAdapterError(error, `restore into ${where} failed`);
  } finally {
    await feeding;
  }
  if (entries === 0) throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'the backup holds no tar entries: nothing to restore');
  for (const folder of folders.reverse()) {
    await chmod(folder.path, folder.mode);
    await utimes(folder.path, folder.mtime, folder.mtime);
  }
  return { warnings: warnings.list() };
}

export { restoreDestination } from './restore-destination.js';
