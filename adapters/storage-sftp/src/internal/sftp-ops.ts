import { posix } from 'node:path';
import type { FileEntry, SFTPWrapper, Stats } from 'ssh2';
import { isNoSuchFile } from './errors.js';

/** Promisified SFTP requests; errors keep ssh2's numeric SFTP status on `code`. */
export function call<T = void>(run: (callback: (error: Error | null | undefined, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => run((error, value) => (error ? reject(error) : resolve(value))));
}

/** `stat` that resolves `undefined` for a missing path. */
export async function statOrMissing(sftp: SFTPWrapper, path: string): Promise<Stats | undefined> {
  try {
    return await call<Stats>((cb) => sftp.stat(path, cb));
  } catch (error) {
    if (isNoSuchFile(error)) return undefined;
    throw error;
  }
}

/** Lists a directory. */
export function readdir(sftp: SFTPWrapper, path: string): Promise<FileEntry[]> {
  return call<FileEntry[]>((cb) => sftp.readdir(path, cb));
}

/** `unlink` that treats a missing path as done. */
export async function unlinkIfPresent(sftp: SFTPWrapper, path: string): Promise<void> {
  try {
    await call((cb) => sftp.unlink(path, cb));
  } catch (error) {
    if (!isNoSuchFile(error)) throw error;
  }
}

/**
 * Creates `relativeDirectory` below `root` (which must exist), parent by parent, like `mkdir -p`. A mkdir that fails
 * because a concurrent put created the folder first is fine: the stat afterwards decides.
 */
export async function mkdirBelow(sftp: SFTPWrapper, root: string, relativeDirectory: string): Promise<void> {
  if (relativeDirectory === '') return;
  const full = posix.join(root, relativeDirectory);
  if ((await statOrMissing(sftp, full))?.isDirectory()) return;
  let current = root;
  for (const segment of relativeDirectory.split('/')) {
    current = posix.join(current, segment);
    try {
      await call((cb) => sftp.mkdir(current, cb));
    } catch (error) {
      const existing = await statOrMissing(sftp, current);
      if (!existing?.isDirectory()) throw error;
    }
  }
}

/** Removes `relativeDirectory` and its parents below `root` while they are empty; never removes `root`. */
export async function removeEmptyParents(sftp: SFTPWrapper, root: string, relativeDirectory: string): Promise<void> {
  const segments = relativeDirectory === '' ? [] : relativeDirectory.split('/');
  while (segments.length > 0) {
    try {
      await call((cb) => sftp.rmdir(posix.join(root, ...segments), cb));
    } catch {
      // Not empty (another object lives here) or already gone: stop climbing.
      return;
    }
    segments.pop();
  }
}

/**
 * Renames over an existing target. `posix-rename@openssh.com` replaces atomically; plain SFTP rename refuses an
 * existing target, so without the extension the target is removed first (a short window without the object).
 */
export async function renameOver(sftp: SFTPWrapper, from: string, to: string): Promise<void> {
  if (sftp._extensions?.['posix-rename@openssh.com'] === '1') {
    await call((cb) => sftp.ext_openssh_rename(from, to, cb));
    return;
  }
  await unlinkIfPresent(sftp, to);
  await call((cb) => sftp.rename(from, to, cb));
}
