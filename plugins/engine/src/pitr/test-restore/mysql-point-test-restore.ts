import type { PointRestoreResult, RunPlan, TestRestoreConfig } from '@holdfast/kernel';
import { disposeAll, type StorageInstance } from '../../run/adapters.js';
import { messageOf, type RunOutcome } from '../../run/outcome.js';
import type { RunContext } from '../../run/run-context.js';
import type { RunServices } from '../../run/services.js';
import { readSidecar, type ReadSidecar } from '../../run/sidecar.js';
import { baseBackupInfoOf } from '../base-backup-record.js';
import { ChangeLogStore, type RecordedBase } from '../change-log-store.js';
import { openStoredBase, segmentFetcher, type StoredLogDeps } from '../restore/stored-log-reader.js';
import { restoredDatabaseChecks } from './mysql-restored-checks.js';
import { mysqlScratchDatabases, sweepMysqlScratch, type MysqlScratchDatabases } from './mysql-scratch-databases.js';
import { mysqlScratchServer, type MysqlScratchServer } from './mysql-scratch-server.js';
import { choosePointTarget, seconds, type PointTestRestoredDatabase, type PointTestRestoreMetadata } from './point-target.js';
import { recoveryPointCheck } from './served-copy-checks.js';
import { concludeChecks, unsuccessfulTestRestore } from '../../test-restore/test-restore-outcome.js';

/**
 * A MySQL/MariaDB point-in-time test restore (docs/pitr.md, "Test restores of MySQL/MariaDB point-in-time jobs"): a
 * uniformly random instant of the job's recoverable window is picked; every database of the base backup it starts
 * from is rebuilt as of that instant in its own throwaway database (`hf_testrestore_<tag>_<n>`) on the scratch
 * server (the `database` target's `sourceId`, else the job's own server) by the source's `restoreToPoint`; each is
 * checked (present, the base's tables, row counts reported) and every one is dropped whatever happened (success,
 * failure, cancel). Throwaway databases a crashed earlier test restore of the job left are dropped first.
 */
export async function runMysqlPointTestRestore(
  ctx: RunContext,
  services: RunServices,
  input: { plan: RunPlan; config: TestRestoreConfig; tagEnded: (tag: string, jobId?: string) => Promise<boolean> },
): Promise<RunOutcome> {
  const { plan, config } = input;
  const store = new ChangeLogStore(ctx.store.database);
  let server: MysqlScratchServer | undefined;
  let storages: StorageInstance[] = [];
  let scratch: MysqlScratchDatabases | undefined;
  let base: RecordedBase | undefined;
  try {
    server = await mysqlScratchServer(services, plan, config);
    const chosen = await choosePointTarget(store, plan, 'mysql-binlog');
    const { target, pointInTime } = chosen;
    base = chosen.base;
    storages = plan.destinations.map((destination) => services.adapters.storage(destination));
    const sidecar = await baseSidecarOf(storages, base, ctx.signal);
    const databases = sidecar.databases ?? [];
    if (databases.length === 0) throw new Error(`the base backup ${base.storageKey} lists no database in its sidecar: there is nothing to restore`);
    await sweep(ctx, server, (tag) => input.tagEnded(tag, plan.job.id));
    scratch = mysqlScratchDatabases(server.scratch, server.config.name, ctx.execution.id, databases);
    const record: PointTestRestoreMetadata = { file: base.storageKey, storageId: '', target: scratch.label, checks: [], pointInTime };
    ctx.metadata.testRestore = record;
    ctx.log.info(
      `point-in-time test restore of job "${plan.job.name}" to ${pointInTime.target} (picked at random in the window ${pointInTime.window.start} .. ${pointInTime.window.end}) from base backup ${base.storageKey} into ${scratch.label}${server.isJobSource ? " (the job's own server: the scratch databases are dropped afterwards)" : ''}`,
    );

    const deps: StoredLogDeps = {
      storages,
      store,
      jobId: plan.job.id,
      encryptionKey: (profileId) => services.catalog.encryptionKey(profileId),
      logKey: plan.encryption?.key ?? null,
      signal: ctx.signal,
      warn: (message) => ctx.log.warn(message),
    };
    const started = Date.now();
    await ctx.enter('02-download', 5);
    const restored: Array<PointTestRestoredDatabase & { result: PointRestoreResult }> = [];
    for (const [name, into] of scratch.databases) {
      const result = await restoreDatabase(ctx, { server, deps, base, target, name, into, record });
      for (const warning of result.warnings) ctx.log.warn(`restore of "${name}": ${warning}`);
      restored.push({ name, into, recoveredTo: result.recoveredTo?.toISOString() ?? null, tables: {}, result });
    }
    pointInTime.restoreSeconds = seconds(Date.now() - started);
    // The copy as a whole holds what the newest replayed transaction of any of its databases says.
    const recoveredTo = newest(restored.map((database) => database.result.recoveredTo));
    pointInTime.recoveredTo = recoveredTo?.toISOString() ?? null;
    pointInTime.differenceSeconds = recoveredTo ? seconds(target.getTime() - recoveredTo.getTime()) : null;
    ctx.log.info(
      `restored in ${pointInTime.restoreSeconds} s; target ${pointInTime.target}, recovered to ${pointInTime.recoveredTo ?? 'the base backup (no transaction replayed)'}${pointInTime.differenceSeconds !== null ? ` (${pointInTime.differenceSeconds} s before the target; binary log times are whole seconds)` : ''}`,
    );

    await ctx.enter('04-checks', 80);
    record.checks = restored.map((database) => recoveryPointCheck(target, database.result.recoveredTo ?? null)).map((check, index) => ({ ...check, name: `${restored[index]!.name}: ${check.name}` }));
    for (const database of restored) {
      const found = await restoredDatabaseChecks(server.scratch, database.name, database.into, sidecar.figures);
      database.tables = found.tables;
      record.checks.push(...found.checks);
    }
    pointInTime.databases = restored.map(({ name, into, recoveredTo: at, tables }) => ({ name, into, recoveredTo: at, tables }));
    concludeChecks(ctx, record, started);
    return { status: 'Success', path: base.storageKey };
  } catch (error) {
    return unsuccessfulTestRestore(ctx, error, base?.storageKey ?? null);
  } finally {
    if (scratch) await cleanUp(ctx, scratch);
    await disposeAll([...(server?.instances ?? []), ...storages.map((storage) => storage.adapter)]);
  }
}

/** One database of the base rebuilt at `target` in `into`, from its own read of the base (the restore takes the stream whole). */
async function restoreDatabase(
  ctx: RunContext,
  input: { server: MysqlScratchServer; deps: StoredLogDeps; base: RecordedBase; target: Date; name: string; into: string; record: PointTestRestoreMetadata },
): Promise<PointRestoreResult> {
  const { deps, base } = input;
  const opened = await openStoredBase(deps, base);
  input.record.storageId = opened.from.configId;
  ctx.log.info(`reading the base backup from ${opened.from.name} to rebuild "${input.name}" in "${input.into}"`);
  let fetched = 0;
  const fetchSegment = segmentFetcher(deps, base.timeline, () => {
    fetched++;
    ctx.progress(Math.min(75, 10 + fetched));
  });
  if (ctx.metadata.stage !== '03-restore') await ctx.enter('03-restore', 10);
  try {
    return await input.server.restorer.restoreToPoint({
      base: baseBackupInfoOf(base),
      baseStream: opened.stream,
      fetchSegment,
      target: { type: 'time', time: input.target },
      database: { name: input.name, into: input.into },
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
}

/**
 * The base backup's sidecar (its databases and the figures counted after its dump), from the first destination
 * holding it that answers; throws naming every destination tried.
 */
async function baseSidecarOf(storages: StorageInstance[], base: RecordedBase, signal: AbortSignal): Promise<ReadSidecar> {
  const failures: string[] = [];
  for (const storage of storages.filter((candidate) => base.destinations.includes(candidate.configId))) {
    try {
      const sidecar = await readSidecar(storage.adapter, base.storageKey, signal);
      if (sidecar) return sidecar;
      failures.push(`${storage.name}: no .meta.json sidecar`);
    } catch (error) {
      if (signal.aborted) throw error;
      failures.push(`${storage.name}: ${messageOf(error)}`);
    }
  }
  throw new Error(`the sidecar of base backup ${base.storageKey} could not be read from any destination (${failures.join('; ') || 'none holds it'})`);
}

function newest(dates: Array<Date | undefined>): Date | null {
  const times = dates.filter((date): date is Date => date instanceof Date).map((date) => date.getTime());
  return times.length > 0 ? new Date(Math.max(...times)) : null;
}

/** Scratch a crashed test restore of this job left is dropped first; a failure here is logged and never fails the run. */
async function sweep(ctx: RunContext, server: MysqlScratchServer, tagEnded: (tag: string) => Promise<boolean>): Promise<void> {
  try {
    for (const message of await sweepMysqlScratch(server.scratch, server.config.name, tagEnded)) ctx.log.warn(message);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    ctx.log.warn(`could not look for scratch databases left by interrupted test restores: ${messageOf(error)}`);
  }
}

/** Drops every scratch database, also after a failure or a cancel. */
async function cleanUp(ctx: RunContext, scratch: MysqlScratchDatabases): Promise<void> {
  try {
    await ctx.enter('05-cleanup', 95);
    const removed = await scratch.drop();
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = removed;
    if (removed) ctx.log.info(`scratch dropped: ${scratch.label}`);
    else ctx.log.error(`scratch could not be dropped: ${scratch.label}`);
  } catch (error) {
    if (ctx.metadata.testRestore) ctx.metadata.testRestore.scratchRemoved = false;
    ctx.log.error(`scratch could not be dropped (${scratch.label}): ${messageOf(error)}`);
  }
}
