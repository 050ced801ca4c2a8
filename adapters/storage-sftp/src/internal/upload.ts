import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createByteCounter } from '@holdfast/sdk';
import type { SFTPWrapper } from 'ssh2';
import { mkdirBelow, removeEmptyParents, renameOver, unlinkIfPresent } from './sftp-ops.js';

/** Where an upload goes: the root, the key's parent folder (relative to the root) and its file name. */
export interface UploadTarget {
  root: string;
  parent: string;
  name: string;
}

function closed(stream: Writable): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

/**
 * Streams `body` to a hidden temp file beside the target, then renames it over the target. On any error or abort
 * the temp file and the folders this upload created are removed, so readers see the old object or the new one,
 * never a part. Backpressure: ssh2's write stream acknowledges each chunk before it asks for more.
 */
export async function uploadAtomically(sftp: SFTPWrapper, target: UploadTarget, body: Readable, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  const directory = posix.join(target.root, target.parent);
  const temp = posix.join(directory, `.${target.name}.${randomBytes(8).toString('hex')}.partial`);
  const counter = createByteCounter();
  let file: Writable | undefined;
  try {
    await mkdirBelow(sftp, target.root, target.parent);
    // 0600: backups often hold whole databases; the login user alone reads them.
    // A 1 MiB buffer lets ssh2 send the buffered chunks as parallel writes (_writev) instead of one per round trip.
    file = sftp.createWriteStream(temp, { flags: 'w', mode: 0o600, highWaterMark: 1024 * 1024 });
    await pipeline(body, counter, file, { signal });
    // The handle closes after 'finish'; renaming after the close means every write was acknowledged and flushed.
    await closed(file);
    signal?.throwIfAborted();
    await renameOver(sftp, temp, posix.join(directory, target.name));
    return counter.bytes;
  } catch (error) {
    body.destroy();
    file?.destroy();
    await unlinkIfPresent(sftp, temp).catch(() => undefined);
    await removeEmptyParents(sftp, target.root, target.parent).catch(() => undefined);
    throw error;
  }
}
