import type { Compression } from '@holdfast/archive';
import type { ArchiveDumpRequest, BaseBackupInfo, DumpHandle, DumpStats, RunPlan, SourceAdapter } from '@holdfast/kernel';
import { chainToken, type ArchiveSidecarInfo } from '../archive/archive-sidecar.js';
import { planChain, type ChainDecision } from '../archive/chain-planner.js';
import { INDEX_SIDECAR_EXTENSION, writeIndexSidecar } from '../archive/index-sidecar.js';
import { compressionSidecarInfo, isCodecAvailable, type CompressionCodec, type CompressionOptions } from '../codec/index.js';
import {
  createExternalCompressStream,
  describeExternalCompressor,
  externalCompressorFor,
  type ExternalCompressor,
  type ExternalCompressStream,
} from '../codec/compression/external-compressor.js';
import { disposeAll, type StorageInstance } from './adapters.js';
import { BackupStreamError, streamBackup, type BranchOutcome } from './backup-pipeline.js';
import { startDirectRun, type DirectRun } from './direct-upload.js';
import { backupExtension, pickBackupKey, renderStem } from './file-name.js';
import { cancellationOf, messageOf, streamingProgress, type RunOutcome } from './outcome.js';
import { retainUntilOf } from './object-lock.js';
import { applyRetention, planRetention } from './retention.js';
import { pruneChangeLog } from '../pitr/wal-retention.js';
import type { RunContext } from './run-context.js';
import { settingOr, type RunServices } from './services.js';
import { SIDECAR_EXTENSION, SIDECAR_FORMAT_VERSION, writeSidecar, type BackupSidecar } from './sidecar.js';
import { verifyUploads, type UploadVerification } from '../verify/post-upload.js';
import { tapFigures, TarFigures } from '../test-restore/archive-figures.js';
import { recordFigures } from '../test-restore/backup-figures.js';
import { baseBackupOf, pointInTimeSidecar } from '../pitr/base-backup-record.js';
import { ChangeLogStore } from '../pitr/change-log-store.js';

interface Prepared {
  plan: RunPlan;
  source: SourceAdapter;
  storages: StorageInstance[];
  stem: string;
  timezone: string;
  recordActor: boolean;
  createdAt: Date;
  /** Seekable jobs: the chain position of this run (null chain: a standalone archive). */
  seekable?: ChainDecision;
}

/** Runs a backup execution through stages 01..05 and says how it ended. Never throws for a run failure. */
export async function runBackup(ctx: RunContext, services: RunServices): Promise<RunOutcome> {
  let prepared: Prepared | undefined;
  let key: string | undefined;
  let isCommitted = false;
  try {
    prepared = await initialize(ctx, services);
    const outcome = await dumpAndUpload(ctx, services, prepared, (chosen) => (key = chosen));
    isCommitted = outcome.status !== 'Failed';
    if (isCommitted) return await retention(ctx, services, prepared, outcome);
    return outcome;
  } catch (error) {
    const cancelled = cancellationOf(ctx.signal);
    if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
    else ctx.log.error(`${ctx.log.stage} failed: ${messageOf(error)}`);
    return { status: cancelled ? 'Cancelled' : 'Failed' };
  } finally {
    if (key && !isCommitted && prepared) await removeEverywhere(ctx, prepared.storages, key);
    if (key) services.keys.release(key);
    await disposeAll([prepared?.source, ...(prepared?.storages.map((storage) => storage.adapter) ?? [])]);
  }
}

async function initialize(ctx: RunContext, services: RunServices): Promise<Prepared> {
  await ctx.enter('01-initialize', 0);
  const plan = await services.catalog.resolveRunPlan(ctx.execution.jobId!);
  ctx.log.info(`job "${plan.job.name}": source ${plan.source.name} (${plan.source.adapterId}), ${plan.destinations.length} destination(s)`);
  if (plan.destinations.length === 0) throw new Error('the job has no destination');
  const codec = plan.job.compression as CompressionCodec;
  if (!isCodecAvailable(codec)) throw new Error(`compression ${codec} is not available in this process`);
  // A level or thread count outside the codec's range fails the run here, before the dump starts.
  compressionSidecarInfo(codec, compressionOptionsOf(plan));
  const timezone = await settingOr(services.settings, 'systemTimezone', 'UTC');
  const recordActor = await settingOr(services.settings, 'privacy.recordTriggerActor', true);
  const source = services.adapters.source(plan.source, ctx);
  const storages = plan.destinations.map((destination) => services.adapters.storage(destination));
  const createdAt = new Date();
  const seekable = await planSeekable(ctx, services, plan, storages, createdAt);
  const chain = chainToken(seekable?.chain ?? null);
  const stem = renderStem(services.adapters.naming(), plan.job.namingPattern, { jobName: plan.job.name, databases: plan.job.databases, date: createdAt, timezone, chain });
  ctx.progress(5, {}, true);
  return { plan, source, storages, stem, timezone, recordActor, createdAt, seekable };
}

/** Seekable jobs: checks the source and codec, and decides the chain position (with the reason in the log). */
async function planSeekable(ctx: RunContext, services: RunServices, plan: RunPlan, storages: StorageInstance[], now: Date): Promise<ChainDecision | undefined> {
  const archive = plan.job.archive;
  if (archive?.format !== 'SEEKABLE') return undefined;
  // The chain planner and browsing read the index of earlier archives, which a server without the key cannot open.
  if (plan.publicKeyEncryption) throw new Error('a seekable archive cannot be encrypted with a public-key profile yet: choose the PLAIN format or a symmetric profile');
  if (!services.adapters.isSeekableArchive(plan.source.adapterId)) throw new Error(`source ${plan.source.name} (${plan.source.adapterId}) cannot write a seekable archive`);
  memberCompressionOf(plan.job.compression as CompressionCodec);
  const decision = await planChain(archive, storages, { jobId: plan.job.id, now, encryptionKey: plan.encryption?.key ?? null, signal: ctx.signal });
  ctx.log.info(`seekable archive: ${decision.reason}`);
  ctx.metadata.archive = { chain: decision.chain, reason: decision.reason };
  return decision;
}

/** The archive compresses each member itself; its stream is stored without a second compression. */
function memberCompressionOf(codec: CompressionCodec): Compression {
  if (codec === 'GZIP') return 'gzip';
  if (codec === 'ZSTD') return 'zstd';
  if (codec === 'NONE') return 'none';
  throw new Error(`a seekable archive compresses members with GZIP or ZSTD, not ${codec}`);
}

/**
 * The compressor's child process, started before the dump. Until the pipeline takes it (after the dump started), an
 * 'error' event (the program vanished) must not go unheard; the pipeline then finds the stream destroyed with it.
 */
function startCompressorAhead(externalCompressor: ExternalCompressor): ExternalCompressStream {
  const compressor = createExternalCompressStream(externalCompressor);
  compressor.on('error', () => undefined);
  return compressor;
}

async function dumpAndUpload(ctx: RunContext, services: RunServices, prepared: Prepared, onKey: (key: string) => void): Promise<RunOutcome> {
  const { plan, storages } = prepared;
  await ctx.enter('02-dump', 5);
  const databases = plan.job.databases;
  ctx.log.info(`dumping ${databases.length ? databases.join(', ') : 'all databases'}`);
  const jobCodec = plan.job.compression as CompressionCodec;
  // A seekable archive compresses per member, so its stream goes to storage without a second compression.
  const codec: CompressionCodec = prepared.seekable ? 'NONE' : jobCodec;
  const configIds = storages.map((storage) => storage.configId);
  const reserveKey = async (sourceExtension: string) => {
    const extension = backupExtension(sourceExtension, codec, plan.encryption !== null || Boolean(plan.publicKeyEncryption));
    const chosen = await services.keys.reserve(ctx.execution.id, configIds, (isTaken) => pickBackupKey(prepared.stem, extension, storages, ctx.signal, isTaken));
    onKey(chosen);
    return chosen;
  };
  // The archive's name is written into its first bytes, so a seekable run picks its key before the dump starts.
  const archiveKey = prepared.seekable ? await reserveKey(SEEKABLE_EXTENSION) : undefined;
  // Jobs with a test restore target count the archive's files on the way through (the figures the test checks).
  const archive = plan.job.testRestore && !prepared.seekable && services.adapters.isFileArchive(plan.source.adapterId) ? new TarFigures() : undefined;
  const retainUntil = plan.destinations.map((destination) => retainUntilOf(services.adapters, destination, prepared.createdAt));
  const onBytes = (bytes: number) => ctx.progress(streamingProgress(bytes, 10, 85), { bytesProcessed: bytes });
  let dump: DumpHandle;
  let direct: DirectRun | undefined;
  let externalCompressor: ExternalCompressor | null = null;
  let compressor: ExternalCompressStream | undefined;
  try {
    // A source on an agent with `direct` destinations: the agent compresses, encrypts, hashes and uploads (issue 48).
    const obstacle = prepared.seekable ? 'a seekable archive' : archive ? 'the test restore counts the archive\'s files on the server' : undefined;
    direct = await startDirectRun(ctx, services, { plan, storages, retainUntil, codec, ...(obstacle ? { obstacle } : {}) }, onBytes);
    // zstd or pigz in a child process when installed (HOLDFAST_EXTERNAL_COMPRESSOR=off: always in-process).
    externalCompressor = direct ? null : externalCompressorFor({ codec, level: plan.job.compressionLevel, threads: plan.job.compressionThreads });
    // Started before the dump, so a source may give its input to a child process of its own (DumpOptions.
    // compressorInput); not when the engine reads the plain stream itself (a test restore's figures).
    compressor = externalCompressor && !archive ? startCompressorAhead(externalCompressor) : undefined;
    dump = direct ? direct.dump : await prepared.source.dump({
      databases,
      signal: ctx.signal,
      engineOptions: { pgCompression: plan.job.pgCompression, engineCompression: plan.job.compression },
      ...(prepared.seekable && archiveKey ? { archive: archiveRequest(plan, prepared, archiveKey) } : {}),
      ...(compressor ? { compressorInput: compressor.input } : {}),
    });
  } catch (error) {
    compressor?.destroy();
    throw new Error(`the dump could not start: ${messageOf(error)}`, { cause: error });
  }
  // The source's child holds the compressor's input now; this process lets go of its own end.
  if (dump.piped) compressor?.releaseInput();
  try {
    const key = archiveKey ?? (await reserveKey(dump.extension));
    ctx.metadata.target = { key, configIds };
    ctx.metadata.destinations = storages.map((s) => ({ configId: s.configId, name: s.name, adapterId: s.adapterId, status: 'pending' as const }));
    await ctx.enter('03-upload', 10);
    ctx.log.info(`writing ${key} to ${storages.map((storage) => storage.name).join(', ')}`);
    if (externalCompressor) ctx.log.info(`compressing with ${describeExternalCompressor(externalCompressor)} (external program${dump.piped ? ', fed by the source directly' : ''})`);
    const piped = dump.piped;
    let streamed;
    try {
      streamed = direct ? await direct.upload(key, onBytes) : await streamBackup({
        externalCompressor,
        ...(compressor ? { compressor } : {}),
        ...(piped ? { piped: { bytesWritten: () => piped.bytesWritten(), done: dump.done } } : {}),
        dump: archive ? tapFigures(dump.stream, archive) : dump.stream,
        codec,
        compression: compressionOptionsOf(plan),
        encryptionKey: plan.encryption?.key ?? null,
        recipient: plan.publicKeyEncryption?.recipient ?? null,
        storages,
        key,
        // Object-locked destinations keep each backup at least until its retention policy may prune it.
        retainUntil,
        signal: ctx.signal,
        onBytes,
      });
    } catch (error) {
      if (error instanceof BackupStreamError) logDestinations(ctx, error.outcomes);
      throw error;
    }
    const stats = await dump.done;
    ctx.metadata.warnings = stats.warnings;
    // A physical base backup (point-in-time recovery) says where it starts and ends in the change log.
    const base = baseBackupOf(stats);
    const pointInTime = base ? pointInTimeSidecar(base) : undefined;
    if (pointInTime) ctx.metadata.pointInTime = pointInTime;
    for (const warning of stats.warnings) ctx.log.warn(`source: ${warning}`);
    if (stats.engineVersion) {
      // The version history is a side record: failing to write it never fails the backup.
      await services.catalog.recordSourceVersion?.(plan.source.configId, stats.engineVersion).catch((error: unknown) => ctx.log.warn(`version history: ${String(error)}`));
    }
    const archiveInfo = prepared.seekable ? await storeIndexSidecars(ctx, plan, prepared, stats, streamed.outcomes, key) : undefined;
    const seekableFigures = archiveInfo && services.adapters.isFileArchive(plan.source.adapterId) ? { done: Promise.resolve(filesOfIndex(stats)) } : undefined;
    const figures = await recordFigures(ctx, services.adapters, { plan, instance: prepared.source, databases: stats.databases }, archive ?? seekableFigures);
    if (figures) ctx.metadata.figures = figures;
    const compression = compressionSidecarInfo(codec, compressionOptionsOf(plan));
    const profileId = plan.encryption?.profileId ?? plan.publicKeyEncryption?.profileId;
    const encryption = streamed.encryption && profileId ? { ...streamed.encryption, profileId } : null;
    const sidecar: BackupSidecar = {
      formatVersion: SIDECAR_FORMAT_VERSION,
      createdAt: prepared.createdAt.toISOString(),
      sha256: streamed.digests.sha256,
      md5: streamed.digests.md5,
      size: streamed.digests.bytes,
      locked: ctx.execution.lockBackup,
      trigger: {
        type: ctx.execution.triggerType ?? 'Manual',
        ...(prepared.recordActor && ctx.execution.triggerLabel ? { actor: ctx.execution.triggerLabel } : {}),
      },
      compression,
      encryption,
      source: { kind: 'source', adapterId: plan.source.adapterId, configId: plan.source.configId, engineVersion: stats.engineVersion ?? null },
      databases: stats.databases,
      jobId: plan.job.id,
      jobName: plan.job.name,
      executionId: ctx.execution.id,
      ...(figures ? { figures } : {}),
      ...(archiveInfo ? { archive: archiveInfo } : {}),
      ...(pointInTime ? { pointInTime } : {}),
    };
    const verifications = await verifyOrSkip(ctx, plan.job.skipVerification, streamed.outcomes.filter((o) => o.ok), key, streamed.digests.sha256);
    ctx.metadata.verification = verifications;
    // A sidecar goes only where the data object is complete; a destination whose sidecar fails loses its copy too.
    for (const outcome of streamed.outcomes.filter((o) => o.ok)) {
      const verification = verifications.find((v) => v.configId === outcome.storage.configId);
      try {
        await writeSidecar(outcome.storage.adapter, key, { ...sidecar, ...(verification ? { verification: sidecarVerification(verification) } : {}) }, ctx.signal);
      } catch (error) {
        outcome.ok = false;
        outcome.error = `sidecar could not be written: ${messageOf(error)}`;
        await outcome.storage.adapter.delete(key).catch(() => undefined);
        continue;
      }
      // A backup locked at run time also gets the store's legal hold where the destination uses object lock.
      if (ctx.execution.lockBackup && outcome.storage.adapter.setLegalHold) {
        await outcome.storage.adapter.setLegalHold(key, true, { signal: ctx.signal }).catch((error: unknown) => ctx.log.warn(`destination ${outcome.storage.name}: legal hold not set: ${messageOf(error)}`));
      }
    }
    logDestinations(ctx, streamed.outcomes);
    await ctx.enter('04-completion', 90);
    ctx.metadata.checksums = { sha256: streamed.digests.sha256, md5: streamed.digests.md5 };
    ctx.metadata.compression = compression;
    ctx.metadata.encryption = encryption;
    const succeeded = streamed.outcomes.filter((o) => o.ok).length;
    if (succeeded === 0) throw new Error('every destination failed');
    const mismatched = verifications.filter((v) => v.status === 'mismatch').map((v) => v.name);
    if (mismatched.length > 0) ctx.log.error(`verification failed on ${mismatched.join(', ')}: the stored copy differs from what was uploaded`);
    const isPartial = succeeded < streamed.outcomes.length || stats.warnings.length > 0 || mismatched.length > 0;
    if (base) await recordBase(ctx, plan.job.id, key, base, streamed.outcomes.filter((o) => o.ok).map((o) => o.storage.configId));
    ctx.log.info(`${key}: ${streamed.digests.bytes} bytes, sha256 ${streamed.digests.sha256}, on ${succeeded} of ${streamed.outcomes.length} destination(s)`);
    return { status: isPartial ? 'Partial' : 'Success', size: streamed.digests.bytes, path: key };
  } finally {
    if (!dump.stream.destroyed) dump.stream.destroy();
    compressor?.destroy();
  }
}

/**
 * Records a base backup where the recoverable window finds it without listing storage. Failing to record it fails
 * the run: a base backup the window does not know would never be offered for a restore.
 */
async function recordBase(ctx: RunContext, jobId: string, key: string, base: BaseBackupInfo, destinations: string[]): Promise<void> {
  await new ChangeLogStore(ctx.store.database).recordBase({ executionId: ctx.execution.id, jobId, storageKey: key, ...base, startedAt: new Date(base.startedAt), consistentAt: new Date(base.consistentAt), destinations });
  ctx.log.info(`base backup for point-in-time recovery: ${base.logKind} from ${base.startSegment} (${base.startPosition}), timeline ${base.timeline}, consistent at ${new Date(base.consistentAt).toISOString()}`);
}

/** Post-upload verification, unless the job opted out (then every destination is recorded as `skipped`). */
async function verifyOrSkip(ctx: RunContext, skip: boolean, outcomes: BranchOutcome[], key: string, sha256: string): Promise<UploadVerification[]> {
  if (!skip) return verifyUploads(ctx, outcomes, key, sha256);
  ctx.log.info('post-upload verification skipped (the job sets skipVerification)');
  return outcomes.map(({ storage }) => ({ configId: storage.configId, name: storage.name, status: 'skipped' as const }));
}

/** The per-destination verification as a sidecar records it (docs/formats/sidecar.md). */
function sidecarVerification(verification: UploadVerification): BackupSidecar['verification'] {
  return { status: verification.status, ...(verification.method ? { method: verification.method } : {}), ...(verification.verifiedAt ? { verifiedAt: verification.verifiedAt } : {}) };
}

function logDestinations(ctx: RunContext, outcomes: BranchOutcome[]): void {
  ctx.metadata.destinations = outcomes.map(({ storage, ok, size, error }) => ({
    configId: storage.configId,
    name: storage.name,
    adapterId: storage.adapterId,
    status: ok ? 'success' : 'failed',
    ...(size === undefined ? {} : { size }),
    ...(error ? { error } : {}),
  }));
  for (const outcome of outcomes) {
    if (outcome.ok) ctx.log.info(`destination ${outcome.storage.name}: stored`);
    else ctx.log.error(`destination ${outcome.storage.name} failed: ${outcome.error}`);
  }
}

async function retention(ctx: RunContext, services: RunServices, prepared: Prepared, outcome: RunOutcome): Promise<RunOutcome> {
  await ctx.enter('05-retention', 95);
  let hasFailure = false;
  ctx.metadata.retention = [];
  const succeeded = new Set(ctx.metadata.destinations?.filter((d) => d.status === 'success').map((d) => d.configId));
  for (const [index, destination] of prepared.plan.destinations.entries()) {
    const storage = prepared.storages[index]!;
    if (!destination.retention || !succeeded.has(storage.configId)) continue;
    try {
      const strategy = services.adapters.retention(destination.retention.strategyId, destination.retention.config);
      const verdicts = await planRetention(storage, strategy, { jobId: prepared.plan.job.id, timezone: prepared.timezone, signal: ctx.signal });
      const result = await applyRetention(storage, verdicts, ctx.log);
      // A backup the store still holds under an object lock is kept, not a failure (issue 45).
      const kept = verdicts.filter((v) => v.action === 'keep').length + result.locked.length;
      ctx.log.info(`retention on ${storage.name}: kept ${kept}${result.locked.length > 0 ? ` (${result.locked.length} under an object lock)` : ''}, deleted ${result.deleted.length}`);
      await new ChangeLogStore(ctx.store.database).forgetBasesAt(prepared.plan.job.id, storage.configId, result.deleted).catch((error: unknown) => ctx.log.warn(`point-in-time: base backups deleted from ${storage.name} not recorded: ${messageOf(error)}`));
      ctx.metadata.retention.push({ configId: storage.configId, deleted: result.deleted, kept, errors: result.errors, ...(result.locked.length > 0 ? { locked: result.locked } : {}) });
      if (result.errors.length > 0) hasFailure = true;
    } catch (error) {
      if (cancellationOf(ctx.signal)) throw error;
      hasFailure = true;
      ctx.log.error(`retention on ${storage.name} failed: ${messageOf(error)}`);
    }
  }
  await pruneChangeLogAfterRetention(ctx, prepared);
  ctx.progress(100, {}, true);
  // The upload is done: a retention problem makes the run Partial, never Failed.
  return hasFailure && outcome.status === 'Success' ? { ...outcome, status: 'Partial' } : outcome;
}

/**
 * Point-in-time jobs: the archived change log older than the oldest base backup retention kept goes too (docs/pitr.md
 * "Retention"). A failure is logged and retried by the next run's pass; it never changes the run's status.
 */
async function pruneChangeLogAfterRetention(ctx: RunContext, prepared: Prepared): Promise<void> {
  try {
    await pruneChangeLog({ store: new ChangeLogStore(ctx.store.database), storages: prepared.storages, logger: ctx.log }, prepared.plan.job.id);
  } catch (error) {
    ctx.log.warn(`WAL retention failed (retried after the next run): ${messageOf(error)}`);
  }
}

/** Deletes the backup and its sidecar on every destination (best effort; used after a failure or an abort). */
export async function removeEverywhere(ctx: RunContext, storages: StorageInstance[], key: string): Promise<void> {
  for (const storage of storages) {
    for (const target of [key, `${key}${SIDECAR_EXTENSION}`, `${key}${INDEX_SIDECAR_EXTENSION}`]) {
      await storage.adapter.delete(target).catch((error: unknown) => ctx.log.warn(`could not remove ${target} from ${storage.name}: ${messageOf(error)}`));
    }
  }
}

/** Extension of a Holdfast seekable archive (docs/formats/archive.md). */
export const SEEKABLE_EXTENSION = '.hfa';

/** What the source is asked to write for a seekable run. */
function archiveRequest(plan: RunPlan, prepared: Prepared, archiveName: string): ArchiveDumpRequest {
  const decision = prepared.seekable!;
  return {
    archiveName,
    createdAt: prepared.createdAt,
    compression: memberCompressionOf(plan.job.compression as CompressionCodec),
    ...(plan.job.compressionLevel != null ? { compressionLevel: plan.job.compressionLevel } : {}),
    chain: decision.chain,
    ...(decision.previous ? { previous: decision.previous } : {}),
  };
}

/**
 * Writes `<key>.index.json` next to each stored copy (sealed when the job encrypts). A destination whose index
 * cannot be written loses its copy: a seekable backup without its index cannot be browsed or chained.
 */
async function storeIndexSidecars(ctx: RunContext, plan: RunPlan, prepared: Prepared, stats: DumpStats, outcomes: BranchOutcome[], key: string): Promise<ArchiveSidecarInfo> {
  if (!stats.archive) throw new Error(`source ${plan.source.adapterId} wrote no archive index for a seekable backup`);
  for (const outcome of outcomes.filter((o) => o.ok)) {
    try {
      await writeIndexSidecar(outcome.storage.adapter, key, stats.archive.indexFile, plan.encryption?.key ?? null, ctx.signal);
    } catch (error) {
      outcome.ok = false;
      outcome.error = `index sidecar could not be written: ${messageOf(error)}`;
      await outcome.storage.adapter.delete(key).catch(() => undefined);
    }
  }
  const summary = stats.archive.summary;
  if (summary) ctx.log.info(`archive: ${Object.entries(summary).map(([name, value]) => `${value} ${name}`).join(', ')}; ${stats.archive.index.entries.length} entries in the snapshot`);
  return {
    format: 'holdfast-archive',
    version: 1,
    memberCompression: memberCompressionOf(plan.job.compression as CompressionCodec),
    chain: prepared.seekable?.chain ?? null,
    ...(prepared.seekable?.chainStartedAt ? { chainStartedAt: prepared.seekable.chainStartedAt } : {}),
    entries: stats.archive.index.entries.length,
    ...(summary ? { summary } : {}),
  };
}

/** Regular files of a seekable snapshot and their bytes (hard links count as files, as a restore writes them). */
function filesOfIndex(stats: DumpStats): { count: number; bytes: number } {
  const entries = stats.archive?.index.entries ?? [];
  // Sizes of the files hard links point at, only those (a map of every path is megabytes for a large tree).
  const linked = new Set(entries.filter((entry) => entry.kind === 'hardlink').map((entry) => entry.target ?? ''));
  const sizeOf = new Map(linked.size === 0 ? [] : entries.filter((entry) => linked.has(entry.path)).map((entry) => [entry.path, entry.size ?? 0]));
  let count = 0;
  let bytes = 0;
  for (const entry of entries) {
    if (entry.kind === 'file') bytes += entry.size ?? 0;
    else if (entry.kind === 'hardlink') bytes += sizeOf.get(entry.target ?? '') ?? 0;
    else continue;
    count += 1;
  }
  return { count, bytes };
}

/** The job's codec tuning (null fields: the codec's defaults). */
function compressionOptionsOf(plan: RunPlan): CompressionOptions {
  return { level: plan.job.compressionLevel ?? null, threads: plan.job.compressionThreads ?? null };
}
