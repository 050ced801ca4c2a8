import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { StorageObjectInfo } from '@holdfast/sdk';
import { AdapterError } from '@holdfast/sdk';
import { LOCAL_ORIGIN, toAdapterError } from './errors.js';
import { TEMP_FILE_PATTERN } from './paths.js';
import { confinedFile } from './confinement.js';

/** Where a walk starts and what it must match. */
export interface WalkStart {
  directory: string;
  /** Key prefix of `directory` (`''` at the root, else ending in `/`). */
  keyPrefix: string;
  /** Every yielded key starts with this. */
  prefix: string;
  root: string;
  /** Real path of the root: a symlink is listed only when its target resolves inside it. */
  realRoot: string;
  signal?: AbortSignal;
}

function mayContain(directoryKey: string, prefix: string): boolean {
  const asPrefix = `${directoryKey}/`;
  return asPrefix.startsWith(prefix) || prefix.startsWith(asPrefix);
}

async function readSorted(directory: string, root: string) {
  try {
    const entries = await readdir(directory, { withFileTypes: true });
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    const code = (error as { code?: string }).code;
    // Below the root, a missing folder only means no key has this prefix; at the root it is an access failure.
    if (directory !== root && (code === 'ENOENT' || code === 'ENOTDIR')) return [];
    throw toAdapterError(error, `cannot list ${directory}`);
  }
}

/** A temp file untouched this long belongs to a put that a crash cut off (a live put keeps writing to it). */
export const STALE_TEMP_FILE_MS = 24 * 60 * 60 * 1000;

/** Sweeps a crash's leftover temp file as listings pass it; best effort, a failure only leaves it for next time. */
async function removeIfStale(path: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (info && Date.now() - info.mtimeMs > STALE_TEMP_FILE_MS) await unlink(path).catch(() => undefined);
}

/**
 * Walks directories depth-first in name order and yields the files whose `/`-separated key starts with the prefix.
 * Temp files of in-flight puts are skipped; those a crash left behind (untouched for a day) are removed on the way.
 * Symlinks to files inside the root are listed, links leading out of it are not; symlinked directories are not
 * entered (they could loop or leave the root).
 */
export async function* walkObjects(start: WalkStart): AsyncGenerator<StorageObjectInfo> {
  for (const entry of await readSorted(start.directory, start.root)) {
    if (start.signal?.aborted) throw new AdapterError(LOCAL_ORIGIN, 'ABORTED', 'listing aborted');
    const key = start.keyPrefix + entry.name;
    const path = join(start.directory, entry.name);
    if (entry.isDirectory()) {
      if (mayContain(key, start.prefix)) {
        yield* walkObjects({ ...start, directory: path, keyPrefix: `${key}/` });
      }
      continue;
    }
    if (TEMP_FILE_PATTERN.test(entry.name)) {
      await removeIfStale(path);
      continue;
    }
    if (!key.startsWith(start.prefix)) continue;
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    // A link is an object only when it resolves inside the root: one leading out would expose a foreign file.
    if (entry.isSymbolicLink() && (await confinedFile(path, start.realRoot).catch(() => undefined)) === undefined) continue;
    const info = await stat(path).catch(() => undefined);
    // A dangling link or a file deleted meanwhile is not an object.
    if (!info?.isFile()) continue;
    yield { key, size: info.size, modifiedAt: info.mtime };
  }
}
