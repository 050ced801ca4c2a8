import { createWriteStream } from 'node:fs';
import { chmod, link, lstat, lutimes, mkdir, realpath, rm, symlink, unlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { AdapterError, type RestoreResult } from '@holdfast/sdk';
import { DIRECTORY_ORIGIN, aborted, errnoOf, toAdapterError } from './errors.js';
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

/** Removes a non-folder at `path` so the entry can take its place (a restore overwrites). */
async function clearForFile(path: string): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (!existing) return;
  if (existing.isDirectory()) await rm(path, { recursive: true });
  else await unlink(path);
}

/** Refuses to write below a path component that is a symlink: a crafted earlier entry could redirect it outside. */
async function ensureParent(root: string, path: string): Promise<boolean> {
  const parent = dirname(path);
  await mkdir(parent, { recursive: true });
  return (await realpath(parent)) === parent;
}

/** Resolves a hard link's target member to a file path, or the reason it is refused. */
type LinkResolver = (memberName: string) => { path: string } | { refused: string };

async function writeEntry(location: MemberLocation, header: Header, body: Readable, folders: PendingFolder[], warnings: WarningList, resolveLink: LinkResolver, signal: AbortSignal): Promise<void> {
  const { root, relative } = location;
  const path = join(root, relative);
  if (!(await ensureParent(root, path))) {
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
      await clearForFile(path);
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
      await clearForFile(path);
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
      await clearForFile(path);
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
        await writeEntry(location, entry.header, entry as unknown as Readable, folders, warnings, resolveLink, signal);
      }
      entry.resume();
    }
  } catch (error) {
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
