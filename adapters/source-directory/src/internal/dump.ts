import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { type DumpHandle, type DumpStats, type KernelLogger } from '@holdfast/sdk';
import { aborted, toAdapterError } from './errors.js';
import { writeArchive } from './pack.js';
import { walkRoots, type ArchiveRoot } from './walk.js';
import { WarningList } from './warnings.js';

/** Everything one dump needs. */
export interface DumpPlan {
  roots: ArchiveRoot[];
  exclude: readonly string[];
  followSymlinks: boolean;
  /** Why a followed symlink may not be read (the host's local path rule), or undefined when it may. */
  refusal?: (absolute: string) => Promise<string | undefined>;
  maxOpenFiles: number;
  logger: KernelLogger;
  signal: AbortSignal;
}

/**
 * Starts the tar stream: a producer walks the roots into a tar-stream pack, and a Node stream hands the pack's bytes
 * on with backpressure. `done` resolves with the byte count and warnings once the last byte was read, and rejects
 * when the dump failed, was aborted, or the consumer stopped early.
 */
export async function startDump(plan: DumpPlan): Promise<DumpHandle> {
  const warnings = new WarningList();
  const pack = tar.pack();
  // Stops the producer on an abort and also when the consumer goes away early, so no file stays open.
  const stop = new AbortController();
  const walk = { exclude: plan.exclude, followSymlinks: plan.followSymlinks, refusal: plan.refusal, warnings, logger: plan.logger, signal: stop.signal };
  void writeArchive(pack, walkRoots(plan.roots, walk), { ...walk, maxOpenFiles: plan.maxOpenFiles }).then(
    () => pack.finalize(),
    (error: unknown) => pack.destroy(plan.signal.aborted ? aborted('dump') : toAdapterError(error, 'dump failed')),
  );

  const onAbort = () => stop.abort();
  plan.signal.addEventListener('abort', onAbort, { once: true });
  const chunks = (pack as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  // The first chunk is awaited here, before the Node stream exists, so a failure fails dump() itself and the
  // stream handed out is untouched (not paused) for the consumer.
  let first: IteratorResult<Buffer>;
  try {
    first = await chunks.next();
  } catch (error) {
    plan.signal.removeEventListener('abort', onAbort);
    stop.abort();
    throw plan.signal.aborted ? aborted('dump') : toAdapterError(error, 'dump failed');
  }

  let bytes = 0;
  let settle!: { resolve: (stats: DumpStats) => void; reject: (error: unknown) => void };
  const done = new Promise<DumpStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const databases = plan.roots.map((root) => root.path);
  const stream = Readable.from(
    (async function* counted() {
      try {
        for (let next = first; !next.done; next = await chunks.next()) {
          bytes += next.value.length;
          yield next.value;
        }
        settle.resolve({ bytes, databases, engineVersion: undefined, warnings: warnings.list() });
      } catch (error) {
        const wrapped = plan.signal.aborted ? aborted('dump') : toAdapterError(error, 'dump failed');
        settle.reject(wrapped);
        throw wrapped;
      } finally {
        stop.abort();
        pack.destroy();
      }
    })(),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
  const destroyOnAbort = () => stream.destroy(aborted('dump'));
  plan.signal.addEventListener('abort', destroyOnAbort, { once: true });
  // A consumer that stops early destroys the stream; the producer stops and closes the files it opened.
  stream.once('close', () => {
    plan.signal.removeEventListener('abort', onAbort);
    plan.signal.removeEventListener('abort', destroyOnAbort);
    stop.abort();
    if (!stream.readableEnded) settle.reject(aborted(plan.signal.aborted ? 'dump' : 'dump (stream closed before it ended)'));
  });
  return { stream, done, extension: '.tar' };
}
