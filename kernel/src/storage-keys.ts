import { AdapterError, type AdapterErrorOrigin } from './errors.js';

/**
 * Storage key rules shared by every storage adapter. A key is a relative, `/`-separated path below the destination
 * root. Keys are validated, never silently rewritten: a key that would be changed by normalisation is a caller bug,
 * and rewriting it could make two different keys land on the same object.
 *
 * Rejected (AdapterError code `CONFIG`, because the input is wrong and retrying cannot help): empty keys, absolute
 * paths (`/x`), backslashes, empty segments (`a//b`, trailing `/`), `.` and `..` segments, NUL and other control
 * characters.
 */

const DEFAULT_ORIGIN = 'storage';

function reject(origin: AdapterErrorOrigin | string, key: string, reason: string): never {
  // JSON.stringify makes invisible characters (NUL, newlines) visible in the message.
  throw new AdapterError(origin, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: ${reason}`);
}

function checkSegments(origin: AdapterErrorOrigin | string, key: string, segments: string[]): void {
  for (const segment of segments) {
    if (segment === '') reject(origin, key, 'empty path segment (double or trailing "/")');
    if (segment === '.' || segment === '..') reject(origin, key, `"${segment}" segments are not allowed`);
  }
}

function checkCharacters(origin: AdapterErrorOrigin | string, key: string): void {
  if (typeof key !== 'string') reject(origin, String(key), 'a key must be a string');
  if (/[\u0000-\u001f\u007f]/.test(key)) reject(origin, key, 'control characters (including NUL) are not allowed');
  if (key.includes('\\')) reject(origin, key, 'use "/" as the separator, not "\\"');
  if (key.startsWith('/')) reject(origin, key, 'absolute paths are not allowed; keys are relative to the root');
}

/** Validates an object key and returns it unchanged; throws `AdapterError(CONFIG)` naming the problem. */
export function normalizeStorageKey(key: string, origin: AdapterErrorOrigin | string = DEFAULT_ORIGIN): string {
  checkCharacters(origin, key);
  if (key === '') reject(origin, key, 'the key is empty');
  checkSegments(origin, key, key.split('/'));
  return key;
}

/**
 * Validates a listing prefix. `''` lists everything; a prefix matches keys by string prefix (`a/` matches `a/x` and
 * `a/b/y` but not `ab/z`; `a` matches all three). Only the last segment may be partial or empty.
 */
export function normalizeStoragePrefix(prefix: string, origin: AdapterErrorOrigin | string = DEFAULT_ORIGIN): string {
  checkCharacters(origin, prefix);
  if (prefix === '') return prefix;
  const segments = prefix.split('/');
  const last = segments.pop() ?? '';
  checkSegments(origin, prefix, segments);
  if (last === '.' || last === '..') reject(origin, prefix, `"${last}" segments are not allowed`);
  return prefix;
}

/** Splits a valid key into its parent directory part (`''` at the root) and its last segment. */
export function splitStorageKey(key: string): { parent: string; name: string } {
  const slash = key.lastIndexOf('/');
  return slash === -1 ? { parent: '', name: key } : { parent: key.slice(0, slash), name: key.slice(slash + 1) };
}
