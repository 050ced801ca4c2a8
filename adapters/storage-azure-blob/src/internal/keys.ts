import { AdapterError, normalizeStorageKey, normalizeStoragePrefix } from '@holdfast/sdk';
import { AZURE_ORIGIN } from './errors.js';

/** Azure's limit on blob name length, in characters. */
const MAX_BLOB_NAME = 1024;

/** The configured prefix as a blob-name prefix: `''`, or ending in exactly one `/`. */
export function rootPrefixOf(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** Validates a key and returns its blob name below the root prefix. */
export function blobNameOf(root: string, key: string): string {
  normalizeStorageKey(key, AZURE_ORIGIN);
  const name = `${root}${key}`;
  if (name.length > MAX_BLOB_NAME) {
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: blob names are limited to ${MAX_BLOB_NAME} characters`);
  }
  return name;
}

/** Validates a listing prefix and returns the blob-name prefix to list. */
export function listingPrefixOf(root: string, prefix: string): string {
  normalizeStoragePrefix(prefix, AZURE_ORIGIN);
  return `${root}${prefix}`;
}

/** The key of a listed blob, or undefined for names no key can address (written by other tools, e.g. `a//b`). */
export function keyOfBlob(root: string, name: string): string | undefined {
  if (!name.startsWith(root)) return undefined;
  const key = name.slice(root.length);
  try {
    return normalizeStorageKey(key, AZURE_ORIGIN);
  } catch {
    return undefined;
  }
}
