import { open, rmdir } from 'node:fs/promises';
import { dirname, relative } from 'node:path';

/**
 * Removes `directory` and its parents while they are empty, stopping at (and never removing) `root`. Called after
 * a delete or a failed put so emptied key prefixes do not pile up as empty folders.
 */
export async function removeEmptyParents(directory: string, root: string): Promise<void> {
  let current = directory;
  while (current !== root && !relative(root, current).startsWith('..')) {
    try {
      await rmdir(current);
    } catch {
      // Not empty (another object lives here), already gone, or in use by a concurrent put: stop climbing.
      return;
    }
    current = dirname(current);
  }
}

/** fsyncs a directory so a rename inside it survives a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
