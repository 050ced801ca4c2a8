import { type DumpHandle, type DumpStats, type KernelLogger } from '@holdfast/sdk';
import { aborted, toAdapterError } from './errors.js';
import { writeArchive } from './pack.js';
import { TarOutput } from './tar-output.js';
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
 * Starts the tar stream: a producer walks the roots into a {@link TarOutput}, whose stream hands the bytes on with
 * backpressure. `dump()` resolves once the first chunk is out (a failure before it fails `dump()` itself, the stream
 * never handed out); `done` resolves with the byte count and warnings once the last byte was read, and rejects when
 * the dump failed, was aborted, or the consumer stopped early.
 */
export async function startDump(plan: DumpPlan): Promise<DumpHandle> {
  const warnings = new WarningList();
  // Stops the producer on an abort and also when the consumer goes away early, so no file stays open.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  plan.signal.addEventListener('abort', onAbort, { once: true });
  const out = new TarOutput(stop.signal);
  const { stream } = out;
  const wrap = (error: unknown) => (plan.signal.aborted ? aborted('dump') : toAdapterError(error, 'dump failed'));
  const walk = { exclude: plan.exclude, followSymlinks: plan.followSymlinks, refusal: plan.refusal, warnings, logger: plan.logger, signal: stop.signal };
  let settle!: { resolve: (stats: DumpStats) => void; reject: (error: unknown) => void };
  const done = new Promise<DumpStats>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  // Resolved by the first chunk (or the end), rejected by a failure before it.
  let started!: { resolve: () => void; reject: (error: unknown) => void };
  const firstChunk = new Promise<void>((resolve, reject) => (started = { resolve, reject }));
  firstChunk.catch(() => undefined);
  out.onFirstChunk = () => started.resolve();
  const databases = plan.roots.map((root) => root.path);
  void writeArchive(out, walkRoots(plan.roots, walk), { ...walk, maxOpenFiles: plan.maxOpenFiles }).then(
    () => {
      out.finish();
      started.resolve();
    },
    (error: unknown) => {
      const wrapped = wrap(error);
      started.reject(wrapped);
      stream.destroy(wrapped);
    },
  );
  stream.once('end', () => settle.resolve({ bytes: out.bytes, databases, engineVersion: undefined, warnings: warnings.list() }));
  stream.once('error', (error) => settle.reject(error));
  const destroyOnAbort = () => stream.destroy(aborted('dump'));
  plan.signal.addEventListener('abort', destroyOnAbort, { once: true });
  // A consumer that stops early destroys the stream; the producer stops and closes the files it opened.
  stream.once('close', () => {
    plan.signal.removeEventListener('abort', onAbort);
    plan.signal.removeEventListener('abort', destroyOnAbort);
    stop.abort();
    if (!stream.readableEnded) settle.reject(aborted(plan.signal.aborted ? 'dump' : 'dump (stream closed before it ended)'));
  });
  await firstChunk;
  return { stream, done, extension: '.tar' };
}
