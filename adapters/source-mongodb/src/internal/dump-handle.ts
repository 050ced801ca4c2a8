import { Readable } from 'node:stream';
import { AdapterError, type DumpHandle, type DumpStats } from '@holdfast/sdk';
import { ORIGIN } from './errors.js';

/**
 * Wraps the byte source of a dump into a {@link DumpHandle} and waits for its first byte, so a failure at start
 * rejects here, before anything is uploaded. `done` settles once the source finished (or failed, or was aborted).
 */
export async function toDumpHandle(
  source: AsyncGenerator<Buffer>,
  meta: { signal: AbortSignal; databases: string[]; engineVersion?: string; extension: string },
): Promise<DumpHandle> {
  let bytes = 0;
  let settle!: { resolve: (stats: DumpStats) => void; reject: (error: unknown) => void };
  const done = new Promise<DumpStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const stream = Readable.from(
    (async function* counted() {
      try {
        for await (const chunk of source) {
          bytes += chunk.length;
          yield chunk;
        }
        settle.resolve({ bytes, databases: meta.databases, engineVersion: meta.engineVersion, warnings: [] });
      } catch (error) {
        settle.reject(error);
        throw error;
      }
    })(),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
  // An abort must settle `done` even while nobody reads (the generator then sits on a yield): destroying the stream
  // runs the generators' finally blocks, which kill the producer.
  let isHandedOut = false;
  const onAbort = () => {
    const error = new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
    settle.reject(error);
    // Before the handle is handed out nobody listens for 'error' (dump() itself rejects), so destroy quietly.
    stream.destroy(isHandedOut ? error : undefined);
  };
  if (meta.signal.aborted) onAbort();
  else meta.signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => {
    meta.signal.removeEventListener('abort', onAbort);
    if (!stream.readableEnded) settle.reject(new AdapterError(ORIGIN, 'ABORTED', 'dump stream closed before it ended'));
  });
  try {
    await firstByte(stream, meta.signal);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  isHandedOut = true;
  return { stream, done, extension: meta.extension };
}

/**
 * Waits until the stream has buffered its first bytes (or failed) without consuming anything. Unlike the SDK's
 * `awaitFirstByte`, which pauses the stream explicitly (after which a later `on('data')` no longer starts it), this
 * uses a temporary 'readable' listener, whose removal leaves the stream in its initial mode for the consumer.
 */
function firstByte(stream: Readable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const finish = (error?: unknown) => {
      stream.off('readable', onReadable);
      stream.off('error', finish);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    // A 'readable' without bytes means the stream ended empty, which the consumer then sees as an empty dump.
    const onReadable = () => finish();
    const onAbort = () => finish(new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted'));
    stream.on('readable', onReadable);
    stream.once('error', finish);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
