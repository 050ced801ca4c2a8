import { AdapterError, type StorageObjectInfo } from '@holdfast/sdk';
import type { DavEntry, DavSession } from './dav-session.js';
import { WEBDAV_ORIGIN, isMissing, toAdapterError } from './errors.js';
import { TEMP_FILE_PATTERN } from './keys.js';

/** Age after which a temp file counts as a crash's leftover. */
export const STALE_TEMP_FILE_MS = 24 * 60 * 60 * 1000;

/** Where a listing walk starts and what it must match. */
export interface WalkStart {
  dav: DavSession;
  /** Folder key to read (`''` at the root, else ending in `/`). */
  folderKey: string;
  /** Every yielded key starts with this. */
  prefix: string;
  signal?: AbortSignal;
}

function mayContain(folderKey: string, prefix: string): boolean {
  return folderKey.startsWith(prefix) || prefix.startsWith(folderKey);
}

async function entriesOf(start: WalkStart): Promise<DavEntry[]> {
  try {
    const entries = await start.dav.propfind(`/${start.folderKey}`, 1, start.signal);
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    // Below the root, a missing folder only means no key has this prefix; a missing root is an access failure.
    if (start.folderKey !== '' && isMissing(error)) return [];
    throw toAdapterError(error, `cannot list ${start.dav.baseUrl}/${start.folderKey}`);
  }
}

/**
 * Walks collections depth-first in name order (one PROPFIND Depth 1 each: Depth infinity is refused by most
 * servers), yielding files whose key starts with the prefix. Temp files of in-flight puts are skipped; those a
 * crash left, untouched for a day, are deleted on the way.
 */
export async function* walkObjects(start: WalkStart): AsyncGenerator<StorageObjectInfo> {
  for (const entry of await entriesOf(start)) {
    if (start.signal?.aborted) throw new AdapterError(WEBDAV_ORIGIN, 'ABORTED', 'listing was aborted');
    const key = start.folderKey + entry.name;
    if (entry.isCollection) {
      if (mayContain(`${key}/`, start.prefix)) yield* walkObjects({ ...start, folderKey: `${key}/` });
      continue;
    }
    if (TEMP_FILE_PATTERN.test(entry.name)) {
      if (Date.now() - entry.modifiedAt.getTime() > STALE_TEMP_FILE_MS) await start.dav.removeIfPresent(`/${key}`).catch(() => undefined);
      continue;
    }
    if (!key.startsWith(start.prefix)) continue;
    yield { key, size: entry.size, modifiedAt: entry.modifiedAt };
  }
}
