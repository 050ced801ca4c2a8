import { posix } from 'node:path';
import type { StorageObjectInfo } from '@holdfast/sdk';
import type { SFTPWrapper } from 'ssh2';
import type { RootConfinement } from './confinement.js';
import { aborted, isNoSuchFile, toAdapterError } from './errors.js';
import { TEMP_FILE_PATTERN } from './keys.js';
import { readdir, statOrMissing, unlinkIfPresent } from './sftp-ops.js';

/** Age after which a temp file counts as a crash's leftover. */
export const STALE_TEMP_FILE_MS = 24 * 60 * 60 * 1000;

/** Where a listing walk starts and what it must match. */
export interface WalkStart {
  sftp: SFTPWrapper;
  root: string;
  /** Decides whether a symlink stays inside the root (only those are listed). */
  confinement: RootConfinement;
  /** Folder key to read (`''` at the root, else ending in `/`). */
  folderKey: string;
  /** Every yielded key starts with this. */
  prefix: string;
  signal?: AbortSignal;
}

function mayContain(folderKey: string, prefix: string): boolean {
  return folderKey.startsWith(prefix) || prefix.startsWith(folderKey);
}

async function entriesOf(start: WalkStart) {
  try {
    const entries = await readdir(start.sftp, posix.join(start.root, start.folderKey));
    return entries.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
  } catch (error) {
    // Below the root, a missing folder only means no key has this prefix; a missing root is an access failure.
    if (start.folderKey !== '' && isNoSuchFile(error)) return [];
    throw toAdapterError(error, `cannot list ${posix.join(start.root, start.folderKey) || '.'}`);
  }
}

/**
 * Walks folders depth-first in name order, yielding files whose key starts with the prefix. Temp files of in-flight
 * puts are skipped (those a crash left, untouched for a day, are removed on the way); symlinks to files inside the root are listed (links leading out are not), symlinked folders are not entered (they
 * could loop or leave the root).
 */
export async function* walkObjects(start: WalkStart): AsyncGenerator<StorageObjectInfo> {
  for (const entry of await entriesOf(start)) {
    if (start.signal?.aborted) throw aborted('listing');
    if (entry.filename === '.' || entry.filename === '..') continue;
    const key = start.folderKey + entry.filename;
    if (entry.attrs.isDirectory()) {
      if (mayContain(`${key}/`, start.prefix)) yield* walkObjects({ ...start, folderKey: `${key}/` });
      continue;
    }
    if (TEMP_FILE_PATTERN.test(entry.filename)) {
      // A temp file untouched for a day is what a crash cut off (a live put keeps writing): sweep it, best effort.
      if (Date.now() - entry.attrs.mtime * 1000 > STALE_TEMP_FILE_MS) await unlinkIfPresent(start.sftp, posix.join(start.root, key)).catch(() => undefined);
      continue;
    }
    if (!key.startsWith(start.prefix)) continue;
    let attrs = entry.attrs;
    if (attrs.isSymbolicLink()) {
      // A link is an object only when it resolves inside the root: one leading out would expose a foreign file.
      const real = await start.confinement.file(start.sftp, posix.join(start.root, key));
      const target = real === undefined ? undefined : await statOrMissing(start.sftp, real);
      if (!target) continue; // a dangling link (or one leading out) is not an object
      attrs = target;
    }
    if (!attrs.isFile()) continue;
    yield { key, size: attrs.size, modifiedAt: new Date(attrs.mtime * 1000) };
  }
}
