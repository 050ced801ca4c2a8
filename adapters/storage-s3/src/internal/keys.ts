import { normalizeStorageKey, normalizeStoragePrefix } from '@holdfast/sdk';
import { S3_ORIGIN } from './errors.js';

/** The bucket-level key prefix of a config prefix: `''` or `"a/b/"` (always ending in `/`). */
export function rootPrefixOf(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** Validates a storage key and returns the S3 object key under the root prefix. */
export function objectKeyOf(rootPrefix: string, key: string): string {
  return rootPrefix + normalizeStorageKey(key, S3_ORIGIN);
}

/** Validates a listing prefix and returns the S3 prefix to list. */
export function listPrefixOf(rootPrefix: string, prefix: string): string {
  return rootPrefix + normalizeStoragePrefix(prefix, S3_ORIGIN);
}

/**
 * The storage key of a listed S3 object key, or undefined for objects that are no valid key (folder markers like
 * `dir/` that consoles create, `a//b`): those were not written by Holdfast and cannot be read back through it.
 */
export function storageKeyOf(rootPrefix: string, objectKey: string): string | undefined {
  if (!objectKey.startsWith(rootPrefix)) return undefined;
  const key = objectKey.slice(rootPrefix.length);
  try {
    return normalizeStorageKey(key, S3_ORIGIN);
  } catch {
    return undefined;
  }
}
