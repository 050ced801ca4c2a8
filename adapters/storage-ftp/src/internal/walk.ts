import { posix } from 'node:path';
import type { StorageObjectInfo } from '@holdfast/sdk';
import { FileType, type Client, type FileInfo } from 'basic-ftp';
import { aborted, isUnavailable, toAdapterError } from './errors.js';
import { TEMP_FILE_PATTERN } from './keys.js';
import { parseListDate } from './list-dates.js';
import type { FtpPool } from './pool.js';
import { removeIfPresent } from './remote-ops.js';

/** Age after which a temp file counts as a crash's leftover. */
export const STALE_TEMP_FILE_MS = 24 * 60 * 60 * 1000;

/** Where a listing walk starts and what it must match. */
export interface WalkStart {
  pool: FtpPool;
  /** Folder key to read (`''` at the root, else ending in `/`). */
  folderKey: string;
  /** Every yielded key starts with this. */
  prefix: string;
  signal?: AbortSignal;
}

/** A directory entry with its modification time resolved. */
export interface ListedEntry {
  name: string;
  isDirectory: boolean;
  isFile: boolean;
  size: number;
  modifiedAt: Date;
}

/** Lists one directory (CWD + LIST, which copes with spaces in names on every server) with dates resolved. */
export async function listDirectory(client: Client, directory: string): Promise<ListedEntry[]> {
  await client.cd(directory);
  const listed: FileInfo[] = await client.list();
  const entries: ListedEntry[] = [];
  for (const info of listed) {
    if (info.name === '.' || info.name === '..') continue;
    let modifiedAt = info.modifiedAt ?? parseListDate(info.rawModifiedAt);
    if (!modifiedAt && info.type === FileType.File) modifiedAt = await client.lastMod(posix.join(directory, info.name)).catch(() => undefined);
    entries.push({
      name: info.name,
      isDirectory: info.type === FileType.Directory,
      isFile: info.type === FileType.File,
      size: info.size,
      modifiedAt: modifiedAt ?? new Date(0),
    });
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function entriesOf(start: WalkStart): Promise<ListedEntry[]> {
  try {
    // One connection per directory, given back before yielding: a caller may delete while it iterates.
    return await start.pool.use((client, root) => listDirectory(client, posix.join(root, start.folderKey)));
  } catch (error) {
    // Below the root, a missing folder only means no key has this prefix; a missing root is an access failure.
    if (start.folderKey !== '' && isUnavailable(error)) return [];
    throw toAdapterError(error, `cannot list /${start.folderKey} below the root on ${start.pool.where}`);
  }
}

/**
 * Walks folders depth-first in name order, yielding files whose key starts with the prefix. Temp files of in-flight
 * puts are skipped (those a crash left, untouched for a day, are removed on the way); symlinks are not followed.
 */
export async function* walkObjects(start: WalkStart): AsyncGenerator<StorageObjectInfo> {
  for (const entry of await entriesOf(start)) {
    if (start.signal?.aborted) throw aborted('listing');
    const key = start.folderKey + entry.name;
    if (entry.isDirectory) {
      if (`${key}/`.startsWith(start.prefix) || start.prefix.startsWith(`${key}/`)) yield* walkObjects({ ...start, folderKey: `${key}/` });
      continue;
    }
    if (!entry.isFile) continue;
    if (TEMP_FILE_PATTERN.test(entry.name)) {
      if (Date.now() - entry.modifiedAt.getTime() > STALE_TEMP_FILE_MS) {
        await start.pool.use((client, root) => removeIfPresent(client, posix.join(root, key))).catch(() => undefined);
      }
      continue;
    }
    if (!key.startsWith(start.prefix)) continue;
    yield { key, size: entry.size, modifiedAt: entry.modifiedAt };
  }
}
