import { AdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '@holdfast/sdk';
import { SMB_ORIGIN } from './errors.js';

/** Hidden temp files of in-flight puts: `.<name>.<16 hex>.partial` beside the target. */
export const TEMP_FILE_PATTERN = /^\..+\.[0-9a-f]{16}\.partial$/;

// SMB forbids these in names; `;` would split smbclient's command line.
const UNSUPPORTED = /[";:*?<>|]/;

function invalid(key: string, reason: string): never {
  throw new AdapterError(SMB_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: ${reason}`);
}

/** The configured folder inside the share, `/`-separated without leading or trailing slashes (`''` = share root). */
export function normalizeRoot(path: string): string {
  return path.split(/[\\/]+/).filter(Boolean).join('/');
}

/** Joins the root and a relative path (either may be empty). */
export function joinRemote(root: string, relative: string): string {
  return [root, relative].filter(Boolean).join('/');
}

/** Quotes a path for smbclient's command line (the schema and key checks keep `"` and `;` out). */
export function quote(path: string): string {
  return `"${path}"`;
}

/** Validates a key for SMB and returns its path in the share, its parent folder key and its name. */
export function remotePathOf(root: string, key: string): { path: string; parent: string; name: string } {
  normalizeStorageKey(key, SMB_ORIGIN);
  if (UNSUPPORTED.test(key)) invalid(key, 'SMB names cannot contain " ; : * ? < > |');
  const { parent, name } = splitStorageKey(key);
  if (TEMP_FILE_PATTERN.test(name)) invalid(key, 'the name is reserved for temporary files');
  return { path: joinRemote(root, key), parent, name };
}

/** Validates a listing prefix; returns the folder key to start walking from (`''` = root, else ending in `/`). */
export function listingStart(prefix: string): string {
  normalizeStoragePrefix(prefix, SMB_ORIGIN);
  if (UNSUPPORTED.test(prefix)) throw new AdapterError(SMB_ORIGIN, 'CONFIG', `invalid listing prefix ${JSON.stringify(prefix)}: SMB names cannot contain " ; : * ? < > |`);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}

/** The folders from the top down to `folderKey` (`a/b` gives `a`, `a/b`), for mkdir -p. */
export function foldersDownTo(folderKey: string): string[] {
  const segments = folderKey === '' ? [] : folderKey.split('/');
  return segments.map((_, index) => segments.slice(0, index + 1).join('/'));
}
