import { posix } from 'node:path';
import { AdapterError } from '@holdfast/sdk';
import type { Client } from 'basic-ftp';
import { FTP_ORIGIN, isUnavailable } from './errors.js';

/** DELE that treats "not there" (550) as done. */
export async function removeIfPresent(client: Client, path: string): Promise<void> {
  try {
    await client.remove(path);
  } catch (error) {
    if (!isUnavailable(error)) throw error;
  }
}

/** SIZE that resolves `undefined` when the server says the path is no file (550: missing, or a directory). */
export async function sizeOrMissing(client: Client, path: string): Promise<number | undefined> {
  try {
    return await client.size(path);
  } catch (error) {
    if (isUnavailable(error)) return undefined;
    throw error;
  }
}

/** CWD into the root; a 550 means it is missing (or not enterable), which no retry fixes. */
export async function enterRoot(client: Client, root: string, where: string): Promise<void> {
  try {
    await client.cd(root);
  } catch (error) {
    if (isUnavailable(error)) throw new AdapterError(FTP_ORIGIN, 'NOT_FOUND', `root ${root} does not exist on ${where} (or the login may not enter it)`, { cause: error });
    throw error;
  }
}

/**
 * Creates `relativeDirectory` below `root` (which must exist), parent by parent, like `mkdir -p`, with absolute paths
 * (basic-ftp's ensureDir would change directory on the way). A MKD refused because a concurrent put created the
 * folder first is fine: the CWD afterwards decides.
 */
export async function makeDirectories(client: Client, root: string, relativeDirectory: string, where: string): Promise<void> {
  if (relativeDirectory === '') return enterRoot(client, root, where);
  const full = posix.join(root, relativeDirectory);
  try {
    await client.cd(full);
    return;
  } catch (error) {
    if (!isUnavailable(error)) throw error;
  }
  await enterRoot(client, root, where);
  let current = root;
  for (const segment of relativeDirectory.split('/')) {
    current = posix.join(current, segment);
    await client.sendIgnoringError(`MKD ${current}`);
  }
  await client.cd(full);
}

/** Removes `relativeDirectory` and its parents below `root` while they are empty (RMD refuses a non-empty one); never the root. */
export async function removeEmptyParents(client: Client, root: string, relativeDirectory: string): Promise<void> {
  const segments = relativeDirectory === '' ? [] : relativeDirectory.split('/');
  while (segments.length > 0) {
    const reply = await client.sendIgnoringError(`RMD ${posix.join(root, ...segments)}`);
    if (reply.code >= 400) return;
    segments.pop();
  }
}

/** RNFR/RNTO over an existing target; servers that refuse to replace (Windows/IIS) get the target removed first. */
export async function renameOver(client: Client, from: string, to: string): Promise<void> {
  try {
    await client.rename(from, to);
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    await removeIfPresent(client, to);
    await client.rename(from, to);
  }
}
