import { AdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '@holdfast/sdk';
import { WEBDAV_ORIGIN } from './errors.js';

/** Hidden temp files of in-flight puts: `.<name>.<16 hex>.partial` beside the target. */
export const TEMP_FILE_PATTERN = /^\..+\.[0-9a-f]{16}\.partial$/;

/** Validates a key (rejecting names reserved for temp files); returns its path below the root and its parent. */
export function davPathOf(key: string): { path: string; parent: string; name: string } {
  normalizeStorageKey(key, WEBDAV_ORIGIN);
  const { parent, name } = splitStorageKey(key);
  if (TEMP_FILE_PATTERN.test(name)) {
    throw new AdapterError(WEBDAV_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: the name is reserved for temporary files`);
  }
  return { path: `/${key}`, parent, name };
}

/** Validates a listing prefix; returns the folder key to start walking from (`''` = root, else ending in `/`). */
export function listingStart(prefix: string): string {
  normalizeStoragePrefix(prefix, WEBDAV_ORIGIN);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}
