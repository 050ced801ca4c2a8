import { posix } from 'node:path';
import { AdapterError } from '@holdfast/sdk';
import type { SFTPWrapper } from 'ssh2';
import { SFTP_ORIGIN, isNoSuchFile } from './errors.js';
import { call } from './sftp-ops.js';

/** The server's resolved path of `path` (symlinks followed), or undefined when it does not exist. */
async function realPathOrMissing(sftp: SFTPWrapper, path: string): Promise<string | undefined> {
  try {
    return await call<string>((cb) => sftp.realpath(path, cb));
  } catch (error) {
    if (isNoSuchFile(error)) return undefined;
    throw error;
  }
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}/`);
}

/**
 * Keeps every operation inside the destination root on the server: paths are resolved by the server (realpath,
 * which follows symlinks) and anything resolving outside the root's own real path is treated as missing (reads) or
 * refused (writes, deletes). Links that stay inside the root keep working.
 */
export class RootConfinement {
  private realRoot?: Promise<string>;

  constructor(private readonly root: string) {}

  /** The root's real path on the server, resolved once per connection-lifetime instance. */
  rootOf(sftp: SFTPWrapper): Promise<string> {
    this.realRoot ??= call<string>((cb) => sftp.realpath(this.root, cb));
    this.realRoot.catch(() => (this.realRoot = undefined));
    return this.realRoot;
  }

  /** The real path of an object's file inside the root, or undefined (missing, or a link leading out). */
  async file(sftp: SFTPWrapper, path: string): Promise<string | undefined> {
    const root = await this.rootOf(sftp);
    const real = await realPathOrMissing(sftp, path);
    return real !== undefined && real !== root && isInside(real, root) ? real : undefined;
  }

  /** Throws CONFIG when the folder a key writes into or deletes from resolves outside the root. */
  async assertFolder(sftp: SFTPWrapper, folder: string, key: string): Promise<void> {
    const root = await this.rootOf(sftp);
    let current = folder;
    for (;;) {
      const real = await realPathOrMissing(sftp, current);
      if (real !== undefined) {
        if (isInside(real, root)) return;
        throw new AdapterError(SFTP_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: a symlinked folder leads out of the root`);
      }
      const parent = posix.dirname(current);
      if (parent === current) return;
      current = parent;
    }
  }
}
