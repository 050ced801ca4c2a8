import { createHash } from 'node:crypto';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { abortablePipeline, ConflictError, createByteCounter, type RestoreResult, type RestoreTarget, type SourceAdapter } from '@holdfast/kernel';
import { createDecompressStream, createDecryptStream, parseCompressionCodec } from '../codec/index.js';
import { createAgeDecryptStream, isAgeEncryption } from '../codec/age/index.js';
import { describeExternalCompressor } from '../codec/compression/external-compressor.js';
import { externalDecoderFor } from '../codec/compression/external-decoder.js';
import { restoreThroughDecoder } from './decoded-restore.js';
import { explainRestoreFailure } from './explain-failure.js';
import { feedRestore } from './feed-restore.js';
import { takeIdentity } from './held-identities.js';
import { disposeAll, type StorageInstance } from '../run/adapters.js';
import { cancellationOf, messageOf, type RunOutcome } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { RunServices } from '../run/services.js';
import { readSidecar } from '../run/sidecar.js';
import { archiveInfoOf } from '../archive/archive-sidecar.js';
import { loadSnapshot } from '../archive/snapshot-loader.js';
import { restoreTargetOf } from './restore-preflight.js';
import type { RestoreRequest } from './restore-request.js';

export type { RestoreRequest } from './restore-request.js';

/**
 * What the restore's input buffers between the decoders and the source's restore tool. 64 KiB, not more: a 1 MiB
 * buffer kept a dozen decoded pieces waiting, long enough for V8 to move them to the old generation, and a
 * PostgreSQL restore then ran a full collection every few MiB: twice the CPU, 0.8 s more per 256 MiB and 20 MiB more
 * RSS than with 64 KiB (docs/benchmarks.md, "Restore input buffer"). The tools read their stdin in 64 KiB pieces too.
 */
export const RESTORE_INPUT_BUFFER_BYTES = 64 * 1024;

/** SPEC: sources flagged as excluded are never restore targets (they are often production databases). */
export function excludedTarget(name: string): ConflictError {
  return new ConflictError(`Source "${name}" is excluded from restores; choose another target source (targetSourceId)`);
}


/**
 * Hashes what passes and, at the end, compares with the recorded SHA-256. A mismatch errors the stream before it
 * ends, so the restore tool never sees a clean end of input and fails instead of finishing with tampered data.
 */
export class ChecksumGate extends Transform {
  private readonly hash = createHash('sha256');
  constructor(private readonly expected: string) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    callback(null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    const actual = this.hash.digest('hex');
    if (actual !== this.expected) return callback(new Error(`checksum mismatch: the file's SHA-256 is ${actual}, the sidecar records ${this.expected}`));
    callback();
  }
}

/** Runs a restore execution: download -> verify SHA-256 -> decrypt -> decompress -> `source.restore`. */
export async function runRestore(ctx: RunContext, services: RunServices): Promise<RunOutcome> {
  const request = JSON.parse(ctx.execution.request ?? '{}') as RestoreRequest;
  // Taken first and once: the held private key of a public-key backup never outlives the run's start.
  const identity = takeIdentity(request.identityToken);
  let storage: StorageInstance | undefined;
  let source: Awaited<ReturnType<RunServices['adapters']['source']>> | undefined;
  try {
    await ctx.enter('01-initialize', 0);
    const opened = services.adapters.storage(await services.catalog.resolveAdapterConfig(request.storageId));
    storage = opened;
    const sidecar = await readSidecar(storage.adapter, request.file, ctx.signal);
    if (!sidecar) throw new Error(`"${request.file}" has no .meta.json sidecar; its checksum and format cannot be verified`);
    const sourceId = request.targetSourceId ?? sidecar.source?.configId;
    if (!sourceId) throw new Error('no targetSourceId given and the sidecar records no source');
    const targetConfig = await services.catalog.resolveAdapterConfig(sourceId);
    if (targetConfig.excludeFromRestore) throw excludedTarget(targetConfig.name);
    source = services.adapters.source(targetConfig, ctx);
    const codec = parseCompressionCodec(sidecar.compression?.codec ?? 'NONE');
    const isAge = isAgeEncryption(sidecar.encryption);
    if (isAge && !identity) throw new Error('the private key of this public-key backup is not held by this server (it restarted, the key expired, or another instance took the run): start the restore again with privateKey');
    const key = sidecar.encryption && !isAge ? await services.catalog.encryptionKey(requireProfile(sidecar.encryption.profileId)) : null;
    const info = await storage.adapter.stat(request.file);
    const target = restoreTargetOf(request);
    if (archiveInfoOf(sidecar)) return await restoreSeekable(ctx, { storage, source, request, key, target, size: info.size, targetName: targetConfig.name });
    if (request.paths) throw new Error(`"${request.file}" is not a seekable archive; "paths" restores parts of seekable archives only`);
    ctx.log.info(`restoring ${request.file} (${info.size} bytes) from ${storage.name} into ${targetConfig.name}`);
    await ctx.enter('02-download', 5);
    const download = await storage.adapter.get(request.file, { signal: ctx.signal });
    const counter = createByteCounter((bytes) => ctx.progress(5 + (90 * bytes) / Math.max(1, info.size), { bytesProcessed: bytes }), info.size, 250);
    await ctx.enter('03-restore', 10);
    const decryptors = [...(key ? [createDecryptStream({ key })] : []), ...(isAge && identity ? [createAgeDecryptStream(identity)] : [])];
    const decoder = source.acceptsDecodedInput ? externalDecoderFor(codec) : null;
    if (decoder) {
      ctx.log.info(`decompressing with ${describeExternalCompressor(decoder)} (external program, into the source directly)`);
      const stages: [Readable, ...Transform[]] = [download, counter, new ChecksumGate(sidecar.sha256), ...decryptors];
      const result = await restoreThroughDecoder({ signal: ctx.signal, stages, decoder, source, options: { target, signal: ctx.signal, overwrite: request.overwrite === true } }).catch((error: unknown) =>
        explainRestoreFailure({ storage: opened, key: request.file, sha256: sidecar.sha256, encryptionKey: key }, error, ctx.signal),
      );
      return await finishRestore(ctx, request, result, { size: info.size, bytes: counter.bytes });
    }
    // One pipeline into a PassThrough the source reads: an error anywhere (checksum, tag, codec) destroys the
    // restore's input with that error, so the restore fails instead of taking a short stream for a whole one.
    const input = new PassThrough({ highWaterMark: RESTORE_INPUT_BUFFER_BYTES });
    const decoders = [...decryptors, createDecompressStream(codec)];
    const piping = abortablePipeline(ctx.signal, download, counter, new ChecksumGate(sidecar.sha256), ...decoders, input);
    piping.catch(() => undefined);
    // The request's overwrite goes with the restore: a target that appeared after the 409 check is not replaced.
    const restoring = source.restore(input, { target, signal: ctx.signal, overwrite: request.overwrite === true });
    // Both settle before the run reports (a source drops its staging database after a failed restore, docs/security.md
    // "Atomic database restores"); a damaged input is the cause when both failed, so its error is the one reported; a
    // restore that failed on its own is checked against the stored file's SHA-256, to name a damaged backup as such.
    const fed = await feedRestore(input, restoring, piping).catch((error: unknown) =>
      explainRestoreFailure({ storage: opened, key: request.file, sha256: sidecar.sha256, encryptionKey: key }, error, ctx.signal),
    );
    if (fed.unreadBytes > 0) ctx.log.warn(`the source finished restoring with ${fed.unreadBytes} bytes of the backup unread; they were read and checked against the SHA-256 anyway`);
    return await finishRestore(ctx, request, fed.result, { size: info.size, bytes: counter.bytes });
  } catch (error) {
    const cancelled = cancellationOf(ctx.signal);
    if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
    else ctx.log.error(`restore failed: ${messageOf(error)}`);
    return { status: cancelled ? 'Cancelled' : 'Failed', path: request.file };
  } finally {
    await disposeAll([source, storage?.adapter]);
  }
}

/** 04-completion of a streamed restore: its warnings, the last progress and the outcome. */
async function finishRestore(ctx: RunContext, request: RestoreRequest, result: RestoreResult, figures: { size: number; bytes: number }): Promise<RunOutcome> {
  await ctx.enter('04-completion', 95);
  for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);
  ctx.log.info(`restore of ${request.file} finished; SHA-256 verified`);
  ctx.progress(100, { bytesProcessed: figures.bytes }, true);
  return { status: result.warnings.length > 0 ? 'Partial' : 'Success', path: request.file, size: figures.size };
}

/**
 * A seekable archive: the snapshot is resolved from the index sidecars of the backup and its chain, and the source
 * reads what it restores with range reads (only the selected members' bytes when `paths` is given). Each member is
 * checked against the SHA-256 its index records.
 */
async function restoreSeekable(
  ctx: RunContext,
  input: { storage: StorageInstance; source: SourceAdapter; request: RestoreRequest; key: Buffer | null; target: RestoreTarget; size: number; targetName: string },
): Promise<RunOutcome> {
  const { storage, source, request } = input;
  if (!source.restoreArchive) throw new Error(`the target source cannot restore seekable archives`);
  const loaded = await loadSnapshot(storage, request.file, input.key, ctx.signal);
  const required = loaded.snapshot.requiredArchives;
  ctx.log.info(
    `restoring ${request.paths ? request.paths.join(', ') : 'the whole snapshot'} of ${request.file} from ${storage.name} into ${input.targetName}` +
      (required.length > 1 ? ` (chain of ${required.length} archives: ${required.join(', ')})` : ''),
  );
  await ctx.enter('03-restore', 10);
  const result = await source.restoreArchive({ snapshot: loaded.snapshot, rangeReaderFor: loaded.rangeReaderFor, ...(request.paths ? { include: request.paths } : {}) }, { target: input.target, signal: ctx.signal, overwrite: request.overwrite === true });
  await ctx.enter('04-completion', 95);
  for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);
  ctx.log.info(`restore of ${request.file} finished; every restored member matched the SHA-256 its index records`);
  ctx.progress(100, {}, true);
  return { status: result.warnings.length > 0 ? 'Partial' : 'Success', path: request.file, size: input.size };
}

export function requireProfile(profileId: string | undefined): string {
  if (!profileId) throw new Error('the sidecar does not name the encryption profile of this backup');
  return profileId;
}
