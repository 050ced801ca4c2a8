import { createByteCounter, createHashingPassThrough, abortablePipeline, type StreamDigests } from '@holdfast/kernel';
import { Transform, type Duplex, type Readable } from 'node:stream';
import { createCompressStream, createEncryptStream, type CompressionCodec, type CompressionOptions, type EncryptionSidecarInfo } from '../codec/index.js';
import { createAgeEncryptStream, type AgeSidecarInfo } from '../codec/age/index.js';
import { createExternalCompressStream, type ExternalCompressor, type ExternalCompressStream } from '../codec/compression/external-compressor.js';
import type { StorageInstance } from './adapters.js';
import { FanOut, startBranch, type FanOutBranch } from './fan-out.js';
import { createWorkerHashingPassThrough, hashWorkerEnabled } from './worker-hashing.js';

/** What one destination did with the stream. */
export interface BranchOutcome {
  storage: StorageInstance;
  ok: boolean;
  size?: number;
  error?: string;
}

/** Result of {@link streamBackup}. */
export interface StreamedBackup {
  digests: StreamDigests;
  encryption: EncryptionSidecarInfo | AgeSidecarInfo | null;
  outcomes: BranchOutcome[];
}

/** Options of {@link streamBackup}. */
export interface StreamBackupOptions {
  dump: Readable;
  codec: CompressionCodec;
  /** Level and ZSTD threads; absent: the codec's defaults. */
  compression?: CompressionOptions;
  /** Compress in this child process (`zstd`, `pigz`) instead of in-process; the stored format is the same. */
  externalCompressor?: ExternalCompressor | null;
  /** An external compressor started before the dump (its input offered to the source): used instead of a new one. */
  compressor?: ExternalCompressStream;
  /**
   * The source wrote its dump straight into `compressor`'s input (DumpHandle.piped): `dump` carries no bytes, progress
   * comes from the source's count, and the backup is stored only once `done` resolved (a dump that failed half-way
   * must not leave a truncated backup behind, although the compressor saw a clean end of input).
   */
  piped?: { bytesWritten(): number; done: Promise<unknown> };
  encryptionKey: Buffer | null;
  /** A public-key profile's `age1...` recipient (issue 45): the backup is written in the age format instead. */
  recipient?: string | null;
  /** In ascending priority: puts are started in this order. */
  storages: StorageInstance[];
  key: string;
  /** Per storage (same order): the object lock date to write the backup with, for destinations that lock. */
  retainUntil?: ReadonlyArray<Date | undefined>;
  signal: AbortSignal;
  /** Plaintext bytes read from the source so far. */
  onBytes(bytes: number): void;
}

/** The stream failed as a whole; `outcomes` says what each destination had seen (for the log). */
export class BackupStreamError extends Error {
  override readonly name = 'BackupStreamError';
  constructor(
    override readonly cause: unknown,
    readonly outcomes: BranchOutcome[],
  ) {
    super(messageOf(cause), { cause });
  }
}

function outcomesOf(storages: StorageInstance[], settled: PromiseSettledResult<unknown>[]): BranchOutcome[] {
  return settled.map((result, index): BranchOutcome => {
    const storage = storages[index]!;
    if (result.status === 'fulfilled') return { storage, ok: true, size: (result.value as { size?: number } | undefined)?.size };
    return { storage, ok: false, error: messageOf(result.reason) };
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One pass, no temp files: dump -> count -> compress -> encrypt -> hash -> fan-out to every destination at once.
 * A destination whose put fails is dropped; the pipeline fails only when the source, a codec or every destination
 * fails, and then every put sees its body destroyed (an atomic put leaves nothing behind).
 */
export async function streamBackup(options: StreamBackupOptions): Promise<StreamedBackup> {
  const branches: FanOutBranch[] = [];
  // Each destination has its own controller: dropping one aborts its put without touching the others.
  const controllers = options.storages.map(() => new AbortController());
  const abortAll = () => controllers.forEach((controller) => controller.abort(options.signal.reason));
  options.signal.addEventListener('abort', abortAll, { once: true });
  let progress: NodeJS.Timeout | undefined;
  try {
    options.storages.forEach((storage, index) => {
      const retainUntil = options.retainUntil?.[index];
      // The backup (never a sidecar) asks for the destination's object lock; destinations without one ignore it.
      const objectLock = retainUntil ? { retainUntil } : {};
      branches.push(startBranch(storage.name, (body) => storage.adapter.put(options.key, body, { signal: controllers[index]!.signal, objectLock })));
    });
    const compress =
      options.compressor ??
      (options.externalCompressor ? createExternalCompressStream(options.externalCompressor) : createCompressStream(options.codec, options.compression));
    const encrypt = options.encryptionKey
      ? createEncryptStream({ key: options.encryptionKey })
      : options.recipient
        ? createAgeEncryptStream(options.recipient)
        : undefined;
    // HOLDFAST_HASH_WORKER=on computes SPEC's checksums on a worker thread (same digests): faster where a core is free,
    // but the worker adds 10-12 MiB to the peak RSS, so the default stays on the main thread (docs/benchmarks.md,
    // "Checksums off the main thread").
    const hasher = hashWorkerEnabled() ? createWorkerHashingPassThrough() : createHashingPassThrough();
    const head: Array<Readable | Transform | Duplex> = options.piped
      ? [compress, untilDumpDone(options.piped.done)]
      : [options.dump, createByteCounter((bytes) => options.onBytes(bytes), undefined, 250), compress];
    const stages = [...head, ...(encrypt ? [encrypt] : []), hasher];
    if (options.piped) progress = reportPipedProgress(options.piped, options.onBytes);
    try {
      await abortablePipeline(options.signal, ...stages, new FanOut(branches));
    } catch (error) {
      controllers.forEach((controller) => controller.abort(error));
      throw new BackupStreamError(error, outcomesOf(options.storages, await Promise.allSettled(branches.map((branch) => branch.done))));
    }
    const outcomes = outcomesOf(options.storages, await Promise.allSettled(branches.map((branch) => branch.done)));
    return { digests: hasher.digests(), encryption: encrypt?.sidecarInfo ?? null, outcomes };
  } finally {
    if (progress) clearInterval(progress);
    if (options.piped) options.onBytes(options.piped.bytesWritten());
    options.signal.removeEventListener('abort', abortAll);
  }
}

/** Every 250 ms, the piped dump's own count of the bytes it wrote (the engine does not see them). */
function reportPipedProgress(piped: NonNullable<StreamBackupOptions['piped']>, onBytes: (bytes: number) => void): NodeJS.Timeout {
  return setInterval(() => onBytes(piped.bytesWritten()), 250);
}

/**
 * Passes the compressed bytes on, and ends only once the piped dump succeeded: a source child that failed half-way
 * still closed the compressor's input, which then ended cleanly; the failure must fail the pipeline (every put is
 * then aborted) rather than store a truncated backup. A failure before the end fails it at once.
 */
function untilDumpDone(done: Promise<unknown>): Transform {
  const gate = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      callback(null, chunk);
    },
    flush(callback) {
      done.then(() => callback(), (error: unknown) => callback(error as Error));
    },
  });
  done.catch((error: unknown) => gate.destroy(error as Error));
  return gate;
}
