import { Readable } from 'node:stream';
import { AdapterError, type AdapterErrorOrigin, type DumpHandle, type DumpStats } from '@holdfast/kernel/adapter';

/** What {@link toDumpHandle} needs besides the byte source. */
export interface DumpHandleOptions {
  /** The adapter's error origin (`{ kind: 'source', id }`), for the ABORTED errors it raises. */
  origin: AdapterErrorOrigin;
  signal: AbortSignal;
  databases: string[];
  engineVersion?: string;
  /** File extension of the dump, dot included. */
  extension: string;
}

/**
 * Wraps the byte source of a dump (an async generator whose `finally` stops its producer) into a {@link DumpHandle}
 * and waits for its first byte, so a failure at start rejects here, before anything is uploaded. `done` settles once
 * the source finished, failed or was aborted; an abort settles it even while nobody reads the stream.
 */
export async function toDumpHandle(source: AsyncGenerator<Buffer>, meta: DumpHandleOptions): Promise<DumpHandle> {
  const ORIGIN = meta.origin;
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
    // An 'error' with no listener is an uncaught exception that stops the process. Nobody listens before the handle
    // is handed out (dump() itself rejects), nor after a consumer that gave up has detached; `done` carries the error.
    stream.destroy(isHandedOut && stream.listenerCount('error') > 0 ? error : undefined);
  };
  if (meta.signal.aborted) onAbort();
  else meta.signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => {
    meta.signal.removeEventListener('abort', onAbort);
    if (!stream.readableEnded) settle.reject(new AdapterError(ORIGIN, 'ABORTED', 'dump stream closed before it ended'));
  });
  try {
    await firstByte(stream, meta.signal, ORIGIN);
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
function firstByte(stream: Readable, signal: AbortSignal, ORIGIN: AdapterErrorOrigin): Promise<void> {
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


/** When {@link peekHead} has read enough: a byte count, or a test of the head read so far with a byte limit. */
export type HeadWanted = number | { enough: (head: Buffer) => boolean; limit: number };

/**
 * Reads at least `size` bytes (or all there is), or until `wanted.enough(head)` holds or `wanted.limit` bytes were
 * read, and returns the head with a stream of the whole input, head included. Iterating by hand, rather than
 * breaking out of `for await`, keeps the source open for the replay.
 */
export async function peekHead(stream: Readable, wanted: HeadWanted): Promise<{ head: Buffer; whole: Readable }> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let head: Buffer = Buffer.alloc(0);
  const isEnough = typeof wanted === 'number' ? (bytes: Buffer) => bytes.length >= wanted : (bytes: Buffer) => bytes.length >= wanted.limit || wanted.enough(bytes);
  while (!isEnough(head)) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    head = chunks.length === 1 ? next.value : Buffer.concat(chunks);
  }
  // A plain Readable rather than Readable.from(generator): destroying the latter waits for the generator's pending
  // `next()`, which never settles while the source waits for more data (Node 24 waits, Node 20 did not), so an
  // aborted restore would hang. Destroying `whole` destroys the source, which ends that wait.
  const pending = [...chunks];
  const whole = new Readable({
    read() {
      const buffered = pending.shift();
      if (buffered) {
        this.push(buffered);
        return;
      }
      iterator.next().then(
        (next) => this.push(next.done ? null : next.value),
        (error: unknown) => this.destroy(error as Error),
      );
    },
    destroy(error, callback) {
      if (!stream.destroyed) stream.destroy();
      callback(error);
    },
  });
  return { head, whole };
}
