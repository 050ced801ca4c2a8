import { PassThrough } from 'node:stream';
import { abortablePipeline, type RestoreResult, type SourceAdapter, type TestRestoreConfig } from '@holdfast/kernel';
import { archiveInfoOf } from '../archive/archive-sidecar.js';
import { loadSnapshot } from '../archive/snapshot-loader.js';
import { createDecompressStream, createDecryptStream, parseCompressionCodec } from '../codec/index.js';
import { pointInTimeKindOf, runPointTestRestore } from '../pitr/test-restore/point-test-restore-run.js';
import { explainRestoreFailure } from '../restore/explain-failure.js';
import { ChecksumGate, RESTORE_INPUT_BUFFER_BYTES } from '../restore/restore-run.js';
import { disposeAll, type StorageInstance } from '../run/adapters.js';
import { messageOf, type RunOutcome } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { RunServices } from '../run/services.js';
import { ExecutionEntity, FINAL_STATUSES, type ExecutionStatus } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import type { TestRestoreMetadata } from '../store/metadata.js';
import { findLatestBackup, type FoundBackup } from './latest-backup.js';
import { createScratch, sweepLeftovers, type Scratch } from './scratch-targets.js';
import { resolveScratchSource, type ScratchSource } from './source-scratch.js';
import { concludeChecks, unsuccessfulTestRestore } from './test-restore-outcome.js';

/** How long a failed restore may take to stop writing into its scratch before the cleanup goes ahead anyway. */
const RESTORE_SETTLE_MS = 30_000;

/** The request stored on a test restore execution (type `Restore`, with the job id). */
export interface TestRestoreRequest {
  testRestore: true;
  jobId: string;
}

/** True for the request of a test restore (as opposed to a restore a user asked for). */
export function isTestRestoreRequest(request: unknown): request is TestRestoreRequest {
  return typeof request === 'object' && request !== null && (request as { testRestore?: unknown }).testRestore === true;
}

/**
 * A test restore: the job's newest backup is restored into its scratch target (a throwaway database, folder or
 * SQLite file, or a Redis index reserved for it), checked against the figures recorded at backup time, and the
 * scratch is dropped whatever happened. The time from
 * the first byte read to the last check is the job's measured restore time (RTO). Any failed check fails the run.
 * Jobs whose source is set up for point-in-time recovery take the point-in-time test restore instead
 * (`runPointTestRestore`: a random instant of the window, into a throwaway folder below the directory target's path
 * for PostgreSQL, into throwaway databases on the database target's server for MySQL/MariaDB).
 */
export async function runTestRestore(ctx: RunContext, services: RunServices, store: ExecutionStore): Promise<RunOutcome> {
  const request = JSON.parse(ctx.execution.request ?? '{}') as TestRestoreRequest;
  const storages: StorageInstance[] = [];
  let target: ScratchSource | undefined;
  let scratch: Scratch | undefined;
  let found: FoundBackup | null = null;
  try {
    await ctx.enter('01-initialize', 0);
    const plan = await services.catalog.resolveRunPlan(request.jobId);
    const config = plan.job.testRestore;
    if (!config) throw new Error(`job "${plan.job.name}" has no test restore target (set testRestore on the job)`);
    // A physical base backup restores only to an instant, never into a scratch database: a point-in-time job's test
    // restore is always one to a random instant of its window (docs/pitr.md, "Test restores").
    const logKind = await pointInTimeKindOf(services, plan);
    if (logKind) return await runPointTestRestore(ctx, services, { plan, config, logKind, tagEnded: (tag, jobId) => tagEnded(store, tag, jobId) });
    // A target that cannot work is reported before any destination is listed.
    target = await resolveScratchSource(services, plan.source, config, ctx);
    const { config: targetConfig, source } = target;
    storages.push(...plan.destinations.map((destination) => services.adapters.storage(destination)));
    found = await findLatestBackup(storages, plan.job.id, ctx.signal, (message) => ctx.log.warn(message));
    if (!found) throw new Error(`no backup of job "${plan.job.name}" was found on its destinations`);
    await sweep(ctx, store, config, target);
    scratch = await createScratch({
      config,
      target: targetConfig,
      jobSource: plan.source,
      scratch: target.scratch,
      jobServer: target.jobServer,
      found,
      executionId: ctx.execution.id,
      executionEnded: (id) => executionEnded(store, id),
      log: (message) => ctx.log.warn(message),
    });
    const record: TestRestoreMetadata = { file: found.key, storageId: found.storage.configId, target: scratch.label, checks: [] };
    ctx.metadata.testRestore = record;
    ctx.log.info(`test restore of ${found.key} (created ${found.sidecar.createdAt}) from ${found.storage.name} into ${scratch.label}`);

    const started = Date.now();
    await ctx.enter('02-download', 5);
    const codec = parseCompressionCodec(found.sidecar.compression?.codec ?? 'NONE');
    const profileId = found.sidecar.encryption?.profileId;
    if (found.sidecar.encryption && !profileId) throw new Error('the sidecar does not name the encryption profile of this backup');
    const key = profileId ? await services.catalog.encryptionKey(profileId) : null;
    const backup = found;
    const restoreSeekable = async () => {
      // A seekable archive (and its chain) is restored by range reads, each member checked against its index.
      await ctx.enter('03-restore', 10);
      if (!source.restoreArchive) throw new Error(`source ${targetConfig.adapterId} cannot restore seekable archives`);
      const loaded = await loadSnapshot(backup.storage, backup.key, key, ctx.signal);
      return source.restoreArchive({ snapshot: loaded.snapshot, rangeReaderFor: loaded.rangeReaderFor }, { target: scratch!.target, signal: ctx.signal });
    };
    const result = archiveInfoOf(found.sidecar) ? await restoreSeekable() : await restoreStream(ctx, { found, key, codec, source, target: scratch.target });
    for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);

    await ctx.enter('04-checks', 80);
    record.checks = await scratch.check();
    concludeChecks(ctx, record, started);
    return { status: 'Success', path: found.key, size: found.sidecar.size ?? null };
  } catch (error) {
    return unsuccessfulTestRestore(ctx, error, found?.key ?? null);
  } finally {
    if (scratch) await cleanUp(ctx, scratch);
    await disposeAll([target?.source, ...(target?.helpers ?? []), ...storages.map((s) => s.adapter)]);
  }
}

/** A plain backup: download -> SHA-256 gate -> decrypt -> decompress -> `source.restore` into the scratch target. */
async function restoreStream(
  ctx: RunContext,
  input: { found: FoundBackup; key: Buffer | null; codec: ReturnType<typeof parseCompressionCodec>; source: SourceAdapter; target: Scratch['target'] },
): Promise<RestoreResult> {
  const { found, key, codec, source } = input;
  const download = await found.storage.adapter.get(found.key, { signal: ctx.signal });
  await ctx.enter('03-restore', 10);
  const stream = new PassThrough({ highWaterMark: RESTORE_INPUT_BUFFER_BYTES });
  const decoders = [...(key ? [createDecryptStream({ key })] : []), createDecompressStream(codec)];
  const piping = abortablePipeline(ctx.signal, download, new ChecksumGate(found.sidecar.sha256), ...decoders, stream);
  piping.catch(() => undefined);
  const restoring = source.restore(stream, { target: input.target, signal: ctx.signal });
  const [result] = await Promise.all([restoring, piping]).catch(async (error: unknown) => {
    // Stop both sides and let the restore settle before anything else: a restore still writing would recreate
    // the scratch after the cleanup removed it. Bounded, so an adapter that ignores the broken stream cannot hang us.
    stream.destroy(error instanceof Error ? error : new Error(String(error)));
    await Promise.race([Promise.allSettled([restoring, piping]), new Promise((resolve) => setTimeout(resolve, RESTORE_SETTLE_MS).unref())]);
    return explainRestoreFailure({ storage: found.storage, key: found.key, sha256: found.sidecar.sha256, encryptionKey: key }, error, ctx.signal);
  });
  return result;
}

/**
 * True when an execution of this installation whose id starts with `tag` (12 hex digits) exists and has ended; with
 * `jobId`, only an execution of that job counts (a scratch another job's run left is that job's to sweep).
 */
async function tagEnded(store: ExecutionStore, tag: string, jobId?: string): Promise<boolean> {
  const rows = await store.em().find(ExecutionEntity, { id: { $like: `${tag.slice(0, 8)}-${tag.slice(8, 12)}%` }, ...(jobId ? { jobId } : {}) }, { fields: ['id', 'status'] });
  return rows.length > 0 && rows.every((row) => FINAL_STATUSES.includes(row.status as ExecutionStatus));
}

async function executionEnded(store: ExecutionStore, id: string): Promise<boolean> {
  const row = await store.get(id);
  return row !== null && FINAL_STATUSES.includes(row.status as ExecutionStatus);
}

/** Scratch left by crashed test restores is removed first; a failure here is logged and never fails the test restore. */
async function sweep(ctx: RunContext, store: ExecutionStore, config: TestRestoreConfig, target: ScratchSource): Promise<void> {
  try {
    for (const message of await sweepLeftovers(config, target, (tag) => tagEnded(store, tag))) ctx.log.warn(message);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    ctx.log.warn(`could not look for scratch left by interrupted test restores: ${messageOf(error)}`);
  }
}

async function cleanUp(ctx: RunContext, scratch: Scratch): Promise<void> {
  try {
    await ctx.enter('05-cleanup', 95);
    const removed = await scratch.drop();
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = removed;
    if (removed) ctx.log.info(`scratch removed: ${scratch.label}`);
    else ctx.log.error(`scratch could not be removed: ${scratch.label}`);
  } catch (error) {
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = false;
    ctx.log.error(`scratch could not be removed (${scratch.label}): ${messageOf(error)}`);
  }
}
