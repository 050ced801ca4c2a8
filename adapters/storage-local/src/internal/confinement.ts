import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AdapterError, isPathInside, type LocalPathPolicy } from '@holdfast/sdk';
import { LOCAL_ORIGIN, toAdapterError } from './errors.js';

/** The real path of `path`, or undefined when it (or a link on the way) does not exist. */
export async function realPathOrMissing(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined;
    throw error;
  }
}

/** Checks the configured root against the host's local path rule; a refusal is a CONFIG error naming the reason. */
export async function checkRootPolicy(root: string, policy: LocalPathPolicy | undefined): Promise<void> {
  if (!policy) return;
  try {
    await policy.check(root, 'storage');
  } catch (error) {
    if ((error as Error)?.name === 'LocalPathRefusedError') throw new AdapterError(LOCAL_ORIGIN, 'CONFIG', (error as Error).message);
    throw toAdapterError(error, `cannot check the root ${root}`);
  }
}

/**
 * The real path of a key's file when it stays inside the real root, undefined when the file is missing or a symlink
 * (of the file or a folder on the way) leads out of the root: such an object does not exist for this destination.
 */
export async function confinedFile(file: string, realRoot: string): Promise<string | undefined> {
  const real = await realPathOrMissing(file);
  return real !== undefined && real !== realRoot && isPathInside(real, realRoot) ? real : undefined;
}

/**
 * Throws CONFIG when the folder a key writes into or deletes from resolves outside the root (a symlinked folder):
 * the nearest existing ancestor decides, since a put creates the missing rest below it.
 */
export async function assertFolderConfined(folder: string, realRoot: string, key: string): Promise<void> {
  let current = folder;
  for (;;) {
    const real = await realPathOrMissing(current);
    if (real !== undefined) {
      if (isPathInside(real, realRoot)) return;
      throw new AdapterError(LOCAL_ORIGIN, 'CONFIG', `invalid storage key ${JSON.stringify(key)}: a symlinked folder leads out of the root`);
    }
    const parent = dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
