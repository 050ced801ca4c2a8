import { AdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '@holdfast/sdk';
import { RSYNC_ORIGIN } from './errors.js';

/** Our temp files (`.<name>.<16 hex>.partial`) and rsync's own (`.<name>.<6 characters>`). */
const TEMP_NAMES = [/^\..+\.[0-9a-f]{16}\.partial$/, /^\..+\.[A-Za-z0-9]{6}$/];

/** True for names reserved for temp files of in-flight transfers. */
export function isTempName(name: string): boolean {
  return TEMP_NAMES.some((pattern) => pattern.test(name));
}

/** Validates a key (rejecting reserved temp names); returns its parent folder key (`''` at the root) and name. */
export function checkKey(key: string): { parent: string; name: string } {
  normalizeStorageKey(key, RSYNC_ORIGIN);
  const parts = splitStorageKey(key);
  if (isTempName(parts.name)) {
    throw new AdapterError(
      RSYNC_ORIGIN,
      'CONFIG',
      `invalid storage key ${JSON.stringify(key)}: names like ".x.abc123" or ".x.<16 hex>.partial" are reserved for temporary files`,
    );
  }
  return parts;
}

/** Validates a listing prefix; returns the folder key to list recursively (`''` = root, else ending in `/`). */
export function listingFolderOf(prefix: string): string {
  normalizeStoragePrefix(prefix, RSYNC_ORIGIN);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}

/** Joins path parts with single slashes, dropping empty parts. */
export function joinPath(...parts: string[]): string {
  const joined = parts.filter((part) => part !== '').join('/');
  return joined.replace(/\/{2,}/g, '/');
}

/** Quotes one word for a POSIX shell. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
