import { AdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '@holdfast/sdk';
import { RCLONE_ORIGIN } from './errors.js';

/** Hidden temp objects of in-flight puts: `.<name>.<16 hex>.partial` beside the target. */
export const TEMP_NAME_PATTERN = /^\..+\.[0-9a-f]{16}\.partial$/;

/** The remote root without trailing slashes (a bare `name:` stays as it is). */
export function remoteRootOf(remote: string): string {
  return remote.endsWith(':') ? remote : remote.replace(/\/+$/, '');
}

/** `rclone` path of a relative path below the root. */
export function remotePath(root: string, relative: string): string {
  if (relative === '') return root;
  return root.endsWith(':') ? `${root}${relative}` : `${root}/${relative}`;
}

/** Validates a key (rejecting names reserved for temp objects) and returns its parent folder key and name. */
export function checkKey(key: string): { parent: string; name: string } {
  normalizeStorageKey(key, RCLONE_ORIGIN);
  const parts = splitStorageKey(key);
  if (TEMP_NAME_PATTERN.test(parts.name)) {
    throw new AdapterError(RCLONE_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: the name is reserved for temporary objects`);
  }
  return parts;
}

/** Validates a listing prefix; returns the folder key to list recursively (`''` = root, else ending in `/`). */
export function listingFolderOf(prefix: string): string {
  normalizeStoragePrefix(prefix, RCLONE_ORIGIN);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}

/** The key of a listed path, or undefined for temp objects and names no key can address. */
export function keyOfListed(folderKey: string, path: string): string | undefined {
  const key = `${folderKey}${path}`;
  if (TEMP_NAME_PATTERN.test(splitStorageKey(key).name)) return undefined;
  try {
    return normalizeStorageKey(key, RCLONE_ORIGIN);
  } catch {
    return undefined;
  }
}
