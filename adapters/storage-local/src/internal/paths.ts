import { stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { AdapterError, normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from '@holdfast/sdk';
import { LOCAL_ORIGIN, toAdapterError } from './errors.js';

/** Hidden temp files of in-flight puts: `.<name>.<16 hex>.partial` beside the target. */
export const TEMP_FILE_PATTERN = /^\..+\.[0-9a-f]{16}\.partial$/;

/** Maps validated storage keys to paths below one root directory. */
export class KeyPaths {
  readonly root: string;

  constructor(configuredPath: string) {
    this.root = resolve(configuredPath);
  }

  /** The file path of a key; throws AdapterError(CONFIG) for keys that are invalid or look like temp files. */
  fileOf(key: string): string {
    normalizeStorageKey(key, LOCAL_ORIGIN);
    if (TEMP_FILE_PATTERN.test(splitStorageKey(key).name)) {
      throw new AdapterError(LOCAL_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: the name is reserved for temporary files`);
    }
    const path = join(this.root, ...key.split('/'));
    // Belt and braces: validation already excludes "..", this guards against any path surprise.
    if (!path.startsWith(this.root + sep)) {
      throw new AdapterError(LOCAL_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: it leaves the root`);
    }
    return path;
  }

  /** Validates a listing prefix and returns the directory to walk and the key prefix of that directory. */
  listingStart(prefix: string): { directory: string; keyPrefix: string } {
    normalizeStoragePrefix(prefix, LOCAL_ORIGIN);
    const slash = prefix.lastIndexOf('/');
    const keyPrefix = slash === -1 ? '' : prefix.slice(0, slash + 1);
    const directory = keyPrefix === '' ? this.root : join(this.root, ...keyPrefix.slice(0, -1).split('/'));
    return { directory, keyPrefix };
  }

  /** Throws NOT_FOUND/AUTH when the root is missing or not a directory: never write into an unmounted mount point. */
  async assertRoot(): Promise<void> {
    let info;
    try {
      info = await stat(this.root);
    } catch (error) {
      throw toAdapterError(error, `root directory ${this.root} is not accessible (is the drive mounted?)`);
    }
    if (!info.isDirectory()) {
      throw new AdapterError(LOCAL_ORIGIN, 'CONFIG', `root ${this.root} is not a directory`);
    }
  }
}
