import { HttpError, type ChangeLogKind, type PointInTimeSupport, type PointRestoreResult, type RecoveryTarget, type RunPlan, type SourceAdapter, type TestRestoreConfig } from '@holdfast/kernel';
import { disposeAll, type StorageInstance } from '../../run/adapters.js';
import { messageOf, type RunOutcome } from '../../run/outcome.js';
import type { RunContext } from '../../run/run-context.js';
import { baseBackupInfoOf } from '../base-backup-record.js';
import type { RunServices } from '../../run/services.js';
import { ChangeLogStore, type RecordedBase } from '../change-log-store.js';
import { openStoredBase, segmentFetcher, type StoredLogDeps } from '../restore/stored-log-reader.js';
import { createPointScratch, freeLocalPort, sweepPointLeftovers, type PointScratch } from './point-scratch.js';
import { runMysqlPointTestRestore } from './mysql-point-test-restore.js';
import { choosePointTarget, seconds, type PointTestRestoreMetadata } from './point-target.js';
import { recoveryPointCheck, servedCopyChecks, servedCopyConfig } from './served-copy-checks.js';
import { concludeChecks, unsuccessfulTestRestore } from '../../test-restore/test-restore-outcome.js';

/** PostgreSQL's refusal when the archived WAL holds no commit after a time target (it cannot tell it got there). */
const TARGET_NOT_REACHED = /recovery ended before configured recovery target was reached/;

export type { PointInTimeTestRestoreRecord, PointTestRestoreMetadata } from './point-target.js';

/** The change log a job's source streams, or null when the source is not set up for point-in-time recovery. */
export async function pointInTimeKindOf(services: RunServices, plan: RunPlan): Promise<ChangeLogKind | null> {
  const source = services.adapters.source(plan.source);
  try {
    return source.pointInTime?.()?.logKind ?? null;
  } finally {
    await disposeAll([source]);
  }
}

/**
 * Why a point-in-time test restore of a job whose source streams `logKind` cannot go to `config`'s target, or
 * undefined when it can. MySQL/MariaDB rebuilds each database of the base in a throwaway database on a server, so it
 * takes a `database` target (docs/pitr.md, "Test restores of MySQL/MariaDB point-in-time jobs"); a directory or any
 * other target is refused when queued (422) and, for a run queued before, at its start. PostgreSQL's directory rule
 * is checked at the run's start (a job saved before it keeps running into the sentence there).
 */
export function pointTestRestoreRefusal(jobName: string, logKind: ChangeLogKind | null, config: TestRestoreConfig | null | undefined): string | undefined {
  if (logKind !== 'mysql-binlog' || !config || config.target.type === 'database') return undefined;
  return `job "${jobName}" is a MySQL/MariaDB point-in-time job: its test restore rebuilds each database of the base backup in a throwaway database on a MySQL/MariaDB server and replays the binary log into it, so it takes a database target, not ${config.target.type}; set testRestore.target to { "type": "database" } (the scratch databases go on the job's own server) or { "type": "database", "sourceId": "<id of a MySQL/MariaDB source>" } (they go on that server, and production is not written)`;
}

/** 422 when the job is a point-in-time job whose test restore target does not fit (see {@link pointTestRestoreRefusal}). */
export async function refuseUnsupportedPointTestRestore(services: RunServices, plan: RunPlan): Promise<void> {
  const refusal = pointTestRestoreRefusal(plan.job.name, await pointInTimeKindOf(services, plan), plan.job.testRestore);
  if (refusal) throw new HttpError(422, refusal);
}

/**
 * A point-in-time test restore (docs/pitr.md, "Test restores"): a uniformly random instant of the job's recoverable
 * window is picked, the base backup and WAL are restored to it into a throwaway folder below
 * `testRestore.target.path`, the copy is served on a free local port and asked questions through the job's own
 * source, then stopped and the folder removed whatever happened. The measured restore time and the achieved
 * recovery point are recorded in `metadata.testRestore` and the log. A MySQL/MariaDB job with a `database` target
 * goes to {@link runMysqlPointTestRestore} instead (throwaway databases on a server, not a folder).
 */
export async function runPointTestRestore(
  ctx: RunContext,
  services: RunServices,
  input: { plan: RunPlan; config: TestRestoreConfig; logKind: ChangeLogKind; tagEnded: (tag: string, jobId?: string) => Promise<boolean> },
): Promise<RunOutcome> {
  const { plan, config, logKind } = input;
  const refusal = pointTestRestoreRefusal(plan.job.name, logKind, config);
  if (!refusal && logKind === 'mysql-binlog') return runMysqlPointTestRestore(ctx, services, input);
  const store = new ChangeLogStore(ctx.store.database);
  let source: SourceAdapter | undefined;
  let storages: StorageInstance[] = [];
  let scratch: PointScratch | undefined;
  let base: RecordedBase | undefined;
  try {
    if (refusal) throw new Error(refusal);
    if (config.target.type !== 'directory') {
      throw new Error(
        `job "${plan.job.name}" is a point-in-time job: its test restore rebuilds the whole cluster in a throwaway folder; set testRestore.target to { "type": "directory", "path": "<absolute folder>" } (it is ${config.target.type})`,
      );
    }
    const parent = config.target.path;
    source = services.adapters.source(plan.source);
    const support = source.pointInTime?.() ?? null;
    if (!support) throw new Error(`source ${plan.source.name} is not set up for point-in-time recovery any more`);
    const chosen = await choosePointTarget(store, plan, logKind);
    const { target, pointInTime } = chosen;
    base = chosen.base;
    await sweep(ctx, parent, input.tagEnded);
    scratch = await createPointScratch(parent, ctx.execution.id);
    const record: PointTestRestoreMetadata = { file: base.storageKey, storageId: '', target: scratch.label, checks: [], pointInTime };
    ctx.metadata.testRestore = record;
    ctx.log.info(
      `point-in-time test restore of job "${plan.job.name}" to ${pointInTime.target} (picked at random in the window ${pointInTime.window.start} .. ${pointInTime.window.end}) from base backup ${base.storageKey} into ${scratch.label}`,
    );

    storages = plan.destinations.map((destination) => services.adapters.storage(destination));
    const deps: StoredLogDeps = {
      storages,
      store,
      jobId: plan.job.id,
      encryptionKey: (profileId) => services.catalog.encryptionKey(profileId),
      logKey: plan.encryption?.key ?? null,
      signal: ctx.signal,
      warn: (message) => ctx.log.warn(message),
    };
    const port = await freeLocalPort();
    const started = Date.now();
    await ctx.enter('02-download', 5);
    const restore = restoreOnce(ctx, { support, deps, base, dataDir: scratch.dataDir, port, record });
    let result: PointRestoreResult;
    try {
      result = await restore({ type: 'time', time: target });
    } catch (error) {
      if (ctx.signal.aborted || !TARGET_NOT_REACHED.test(messageOf(error))) throw error;
      // Every commit the archive holds is before the target: the cluster at the target is the archive's end.
      ctx.log.info(`no commit after ${pointInTime.target} was archived (PostgreSQL cannot confirm reaching a time past the last commit); restoring to the end of the archive, which is the state at the target`);
      pointInTime.replayedTo = 'latest';
      result = await restore({ type: 'latest' });
    }
    pointInTime.restoreSeconds = seconds(Date.now() - started);
    for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);
    const recoveredTo = result.recoveredTo ?? null;
    pointInTime.recoveredTo = recoveredTo?.toISOString() ?? null;
    pointInTime.differenceSeconds = recoveredTo ? seconds(target.getTime() - recoveredTo.getTime()) : null;
    ctx.log.info(
      `restored in ${pointInTime.restoreSeconds} s; target ${pointInTime.target}, recovered to ${pointInTime.recoveredTo ?? 'the end of the base backup (no transaction replayed)'}${pointInTime.differenceSeconds !== null ? ` (${pointInTime.differenceSeconds} s before the target)` : ''}`,
    );

    await ctx.enter('04-checks', 80);
    if (!result.served) throw new Error('the source did not leave the restored server running for the checks');
    record.checks = [recoveryPointCheck(target, recoveredTo), ...(await servedCopyChecks(services.adapters, servedCopyConfig(logKind, plan.source, result.served.port)))];
    concludeChecks(ctx, record, started);
    return { status: 'Success', path: base.storageKey };
  } catch (error) {
    return unsuccessfulTestRestore(ctx, error, base?.storageKey ?? null);
  } finally {
    if (scratch) await cleanUp(ctx, scratch);
    await disposeAll([source, ...storages.map((storage) => storage.adapter)]);
  }
}

/**
 * One restore of `base` to a target into the scratch's data directory, served on `port`. A second call (the fallback
 * to `latest`) opens the base again: the source has removed what the failed attempt built.
 */
function restoreOnce(
  ctx: RunContext,
  input: { support: PointInTimeSupport; deps: StoredLogDeps; base: RecordedBase; dataDir: string; port: number; record: PointTestRestoreMetadata },
): (target: RecoveryTarget) => Promise<PointRestoreResult> {
  const { support, deps, base } = input;
  return async (target) => {
    const opened = await openStoredBase(deps, base);
    input.record.storageId = opened.from.configId;
    ctx.log.info(`reading the base backup from ${opened.from.name}`);
    let fetched = 0;
    const fetchSegment = segmentFetcher(deps, base.timeline, () => {
      fetched++;
      ctx.progress(Math.min(60, 10 + fetched));
    });
    await ctx.enter('03-restore', 10);
    try {
      return await support.restoreToPoint({
        base: baseBackupInfoOf(base),
        baseStream: opened.stream,
        fetchSegment,
        target,
        targetPath: input.dataDir,
        servePort: input.port,
        signal: ctx.signal,
        onProgress: (message) => {
          ctx.log.info(message);
          ctx.progress(ctx.metadata.progress ?? 10);
        },
      });
    } finally {
      // A restore that refused before reading the whole base leaves no download running.
      opened.stream.destroy();
    }
  };
}

/** Scratch left by crashed test restores is removed first; a failure here is logged and never fails the test restore. */
async function sweep(ctx: RunContext, parent: string, tagEnded: (tag: string) => Promise<boolean>): Promise<void> {
  try {
    for (const message of await sweepPointLeftovers(parent, tagEnded)) ctx.log.warn(message);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    ctx.log.warn(`could not look for scratch left by interrupted test restores: ${messageOf(error)}`);
  }
}

/** Stops the served copy and removes the scratch folder, also after a failure or a cancel. */
async function cleanUp(ctx: RunContext, scratch: PointScratch): Promise<void> {
  try {
    await ctx.enter('05-cleanup', 95);
    const removed = await scratch.drop();
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = removed;
    if (removed) ctx.log.info(`restored server stopped and scratch removed: ${scratch.label}`);
    else ctx.log.error(`scratch could not be removed: ${scratch.label}`);
  } catch (error) {
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = false;
    ctx.log.error(`scratch could not be removed (${scratch.label}): ${messageOf(error)}`);
  }
}
