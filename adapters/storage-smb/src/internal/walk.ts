import type { StorageObjectInfo } from '@holdfast/sdk';
import { MISSING_STATUSES, statusError } from './errors.js';
import { parseRecursiveListing, type SmbEntry } from './listing.js';
import { TEMP_FILE_PATTERN, joinRemote, quote } from './paths.js';
import type { Smbclient } from './smbclient.js';

/** Age after which a temp file counts as a crash's leftover. */
export const STALE_TEMP_FILE_MS = 24 * 60 * 60 * 1000;

/** Where a listing starts and what it must match. */
export interface WalkStart {
  smb: Smbclient;
  root: string;
  /** Folder key to list (`''` at the root, else ending in `/`). */
  folderKey: string;
  /** Every yielded key starts with this. */
  prefix: string;
  signal?: AbortSignal;
}

async function entriesOf(start: WalkStart): Promise<SmbEntry[]> {
  const folder = joinRemote(start.root, start.folderKey.replace(/\/$/, ''));
  const run = await start.smb.run(['recurse ON', `ls ${quote(folder ? `${folder}/*` : '*')}`], start.signal);
  const failure = run.statuses[0];
  if (failure) {
    // Below the root, a missing folder only means no key has this prefix; a missing root is an access failure.
    if (start.folderKey !== '' && MISSING_STATUSES.has(failure.status)) return [];
    throw statusError(failure, `cannot list ${start.smb.where}/${folder}`);
  }
  const rootPrefix = start.root === '' ? '' : `\\${start.root.split('/').join('\\')}`;
  return parseRecursiveListing(run.messages, rootPrefix, start.folderKey);
}

/**
 * Lists files below a folder with one recursive `ls` (one smbclient run), yielding those whose key starts with the
 * prefix, in key order. Temp files of in-flight puts are skipped; those a crash left, untouched for a day, are
 * deleted afterwards, best effort.
 */
export async function* walkObjects(start: WalkStart): AsyncGenerator<StorageObjectInfo> {
  const stale: string[] = [];
  const objects: StorageObjectInfo[] = [];
  for (const entry of await entriesOf(start)) {
    if (entry.isDirectory) continue;
    const key = entry.folderKey + entry.name;
    if (TEMP_FILE_PATTERN.test(entry.name)) {
      if (Date.now() - entry.modifiedAt.getTime() > STALE_TEMP_FILE_MS) stale.push(joinRemote(start.root, key));
      continue;
    }
    if (key.startsWith(start.prefix)) objects.push({ key, size: entry.size, modifiedAt: entry.modifiedAt });
  }
  if (stale.length > 0) await start.smb.run(stale.map((path) => `del ${quote(path)}`)).catch(() => undefined);
  objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  yield* objects;
}
