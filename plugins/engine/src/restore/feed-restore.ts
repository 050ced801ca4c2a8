import type { PassThrough } from 'node:stream';

/** What settling a restore found besides its result. */
export interface FedRestore<T> {
  result: T;
  /** Bytes of the backup the source did not read before it reported success (read and checked here instead). */
  unreadBytes: number;
}

const isPrematureClose = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE';

/**
 * Waits for a source's restore and the pipeline feeding it (download -> SHA-256 gate -> decoders -> `input`), and
 * makes sure neither can wait on the other forever. A source that stops reading its input early would otherwise
 * leave the pipeline blocked on backpressure, its end (where the SHA-256 is checked) never reached: a restore whose
 * SQL client died on a damaged statement hung at 03-restore that way (docs/formats/compression.md).
 * - The source failed: its input is destroyed, so the pipeline ends at once; a real pipeline error (checksum, codec,
 *   storage) that came first is still the one thrown, else the source's own.
 * - The source succeeded without reading everything: the rest is read and discarded here, so the SHA-256 of the whole
 *   stored file is still checked before the run reports success.
 * Both sides settle before this returns: a source cleans up (drops its staging database) when its restore fails, and
 * the run must not report while that still runs.
 */
export async function feedRestore<T>(input: PassThrough, restoring: Promise<T>, piping: Promise<void>): Promise<FedRestore<T>> {
  let detached = false;
  let unreadBytes = 0;
  const restored = restoring.then(
    (result) => {
      if (!input.readableEnded && !input.destroyed) {
        // The source's own iterator may still listen for 'readable', which keeps the stream out of flowing mode.
        input.removeAllListeners('readable');
        input.on('data', (chunk: Buffer) => (unreadBytes += chunk.length));
        input.resume();
      }
      return result;
    },
    (error: unknown) => {
      detached = !input.readableEnded;
      input.destroy();
      throw error;
    },
  );
  const [restoreOutcome, pipeOutcome] = await Promise.allSettled([restored, piping]);
  if (pipeOutcome.status === 'rejected' && !(detached && isPrematureClose(pipeOutcome.reason))) throw pipeOutcome.reason;
  if (restoreOutcome.status === 'rejected') throw restoreOutcome.reason;
  return { result: restoreOutcome.value, unreadBytes };
}
