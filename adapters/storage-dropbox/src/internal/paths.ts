import { normalizeStorageKey, normalizeStoragePrefix } from '@holdfast/sdk';
import { DROPBOX_ORIGIN } from './errors.js';

/** The Dropbox path of a storage key under the root folder (`/Holdfast` + `/a/b.bin`). */
export function pathOf(root: string, key: string): string {
  return `${root}/${normalizeStorageKey(key, DROPBOX_ORIGIN)}`;
}

/**
 * The folder to list for a prefix and the key prefix to filter by: `a/b` lists folder `a` recursively and keeps keys
 * starting with `a/b` (so `a/bc` matches, as object-store prefixes do).
 */
export function listTargetOf(root: string, prefix: string): { folder: string; keyPrefix: string } {
  const keyPrefix = normalizeStoragePrefix(prefix, DROPBOX_ORIGIN);
  const cut = keyPrefix.lastIndexOf('/');
  const folderPart = cut === -1 ? '' : keyPrefix.slice(0, cut);
  return { folder: folderPart === '' ? root : `${root}/${folderPart}`, keyPrefix };
}

/**
 * The storage key of a listed file path, or undefined when it is outside the root or no valid key. Dropbox paths are
 * case-insensitive: the root is matched on `path_lower`, the key taken from `path_display`.
 */
export function keyOf(root: string, pathLower: string, pathDisplay: string): string | undefined {
  const rootLower = root.toLowerCase();
  if (!pathLower.startsWith(`${rootLower}/`)) return undefined;
  const key = pathDisplay.slice(root.length + 1);
  try {
    return normalizeStorageKey(key, DROPBOX_ORIGIN);
  } catch {
    return undefined;
  }
}
