import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createByteCounter } from '@holdfast/sdk';
import { removeEmptyParents, syncDirectory } from './directories.js';
import { ProgressiveFlush } from './progressive-flush.js';

/** Name of the hidden temp file a put writes before renaming it over the target. */
export function tempFileFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(8).toString('hex')}.partial`);
}

/**
 * Streams `body` into `target` atomically: a hidden temp file in the target's directory, fsync, rename over the
 * target, fsync the directory. On any error or abort the temp file (and directories this put created) are removed,
 * so readers see the old object or the new one, never a part. The data goes to disk while it streams
 * ({@link ProgressiveFlush}), not all at the end. Resolves the number of bytes written.
 */
export async function writeAtomically(target: string, root: string, body: Readable, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  const directory = dirname(target);
  await mkdir(directory, { recursive: true });
  const temp = tempFileFor(target);
  const counter = createByteCounter();
  // 0600: backups often hold whole databases; the server user alone reads them.
  const file = createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true });
  let flusher: ProgressiveFlush | undefined;
  try {
    // Wait for the open: removing the temp file while the open is still in flight would leave it behind.
    const [fd] = (await once(file, 'open')) as [number];
    flusher = new ProgressiveFlush(fd);
    await pipeline(body, counter, flusher, file, { signal });
    // `flush: true` fsyncs before close; wait for the close so the data is on disk before the rename.
    if (!file.closed) await finished(file);
    signal?.throwIfAborted();
    await rename(temp, target);
    await syncDirectory(directory);
    return counter.bytes;
  } catch (error) {
    body.destroy();
    file.destroy();
    // Nothing of this put keeps running after it rejects.
    await flusher?.idle();
    await rm(temp, { force: true });
    await removeEmptyParents(directory, root);
    throw error;
  }
}
