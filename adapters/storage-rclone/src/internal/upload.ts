import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createByteCounter } from '@holdfast/sdk';
import { aborted, exitError } from './errors.js';
import { runRclone, startRclone, tryRclone } from './process.js';
import type { RcloneSession } from './session.js';

/** Where a put goes. */
export interface UploadTarget {
  session: RcloneSession;
  /** `remotePath` of a key relative to the root. */
  pathOf(relative: string): string;
  parent: string;
  name: string;
  key: string;
}

function isPipeError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * Streams `body` into `rclone rcat` on a hidden temp name beside the target, then `rclone moveto` renames it (a
 * server-side move where the backend has one). A failed or aborted put stops rclone before it sees the end of its
 * input, then deletes the temp object, so the key shows the old object or the new one, never a part.
 */
export async function uploadAtomically(target: UploadTarget, body: Readable, options: { size?: number; signal?: AbortSignal }): Promise<number> {
  const { session, signal } = { session: target.session, signal: options.signal };
  signal?.throwIfAborted();
  const what = `put of "${target.key}"`;
  const folder = target.parent === '' ? '' : `${target.parent}/`;
  const temp = target.pathOf(`${folder}.${target.name}.${randomBytes(8).toString('hex')}.partial`);
  const counter = createByteCounter();
  const size = options.size === undefined ? [] : ['--size', String(options.size)];
  const rcat = startRclone(session, ['rcat', ...size, '--', temp], { withStdin: true });
  try {
    let feedError: unknown;
    try {
      await pipeline(body, counter, rcat.child.stdin!, { signal });
    } catch (error) {
      feedError = error;
      // Stop rclone at once: it must not take the closed pipe for the end of a complete body.
      await rcat.stop();
    }
    const exit = await rcat.exited;
    if (signal?.aborted) throw aborted(what);
    if (exit.code !== 0 && (feedError === undefined || isPipeError(feedError))) throw exitError(exit, what, session.secrets);
    if (feedError !== undefined) throw feedError;
    // --ignore-times: never skip the move because an older object has the same size and time. Not under `signal`:
    // a move killed midway may still have happened, and an abort must never report a put that landed.
    await runRclone(session, ['moveto', '--ignore-times', '--', temp, target.pathOf(`${folder}${target.name}`)], what);
    return counter.bytes;
  } catch (error) {
    body.destroy();
    await rcat.stop();
    // Not under `signal`: the clean-up must run even when the put was aborted.
    await tryRclone(session, ['deletefile', '--', temp]).catch(() => undefined);
    throw error;
  }
}
