import { pipeline } from 'node:stream/promises';
import type { Readable, Writable, Transform } from 'node:stream';

type Stage = Readable | Writable | Transform | NodeJS.ReadableStream | NodeJS.WritableStream;

/**
 * `pipeline()` bound to an AbortSignal: aborting destroys every stage (which kills child processes whose stdio
 * they wrap) and rejects with an AbortError. Errors of any stage destroy the rest.
 */
export async function abortablePipeline(signal: AbortSignal | undefined, ...stages: Stage[]): Promise<void> {
  if (stages.length < 2) throw new Error('abortablePipeline needs a source and a destination');
  // node's typings of variadic pipeline are awkward; the runtime accepts any number of stages.
  const run = pipeline as unknown as (...args: unknown[]) => Promise<void>;
  await run(...stages, signal ? { signal } : {});
}

/**
 * Waits for the first chunk of `stream` (or its end) without consuming it. Rejects when the stream errors before
 * its first byte: that is how a dump that fails at connect time fails the run before anything is uploaded.
 */
export function awaitFirstByte(stream: Readable, signal?: AbortSignal): Promise<'data' | 'end'> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    // Taking one chunk in flowing mode, then pausing and unshifting it, leaves the stream whole for the consumer.
    const onData = (chunk: Buffer) => {
      stream.pause();
      stream.unshift(chunk);
      cleanup();
      resolve('data');
    };
    const onEnd = () => {
      cleanup();
      resolve('end');
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAbort = () => {
      cleanup();
      // The caller gives the stream up; an abort may already have scheduled its destroy with an error (an adapter's
      // own abort listener runs first), which without any listener left would be an uncaught exception that stops
      // the process (seen on the agent when the server's connection dropped while pg_dump waited on a lock).
      stream.on('error', () => undefined);
      reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    };
    if (signal?.aborted) return onAbort();
    stream.once('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    // A 'data' listener starts only a stream that was never paused; one paused by an earlier call (or a consumer)
    // would never emit, and a second wait on the same stream would hang.
    if (stream.readableFlowing === false) stream.resume();
  });
}
