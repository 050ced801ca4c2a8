import { access, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { abortablePipeline, type ResolvedAdapterConfig, type RestoreTarget, type SourceAdapter, type TestRestoreConfig } from '@holdfast/kernel';
import { createDecompressStream, createDecryptStream, parseCompressionCodec } from '../codec/index.js';
import { ChecksumGate } from '../restore/restore-run.js';
import { disposeAll, type StorageInstance } from '../run/adapters.js';
import { cancellationOf, messageOf, type RunOutcome } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { RunServices } from '../run/services.js';
import { ExecutionEntity, FINAL_STATUSES, type ExecutionStatus } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import type { TestRestoreMetadata } from '../store/metadata.js';
import { countFiles } from './archive-figures.js';
import { findLatestBackup, type FoundBackup } from './latest-backup.js';
import { scratchDriverFor, type ScratchDatabaseDriver } from './scratch-driver.js';

/** The request stored on a test restore execution (type `Restore`, with the job id). */
export interface TestRestoreRequest {
  testRestore: true;
  jobId: string;
}

/** True for the request of a test restore (as opposed to a restore a user asked for). */
export function isTestRestoreRequest(request: unknown): request is TestRestoreRequest {
  return typeof request === 'object' && request !== null && (request as { testRestore?: unknown }).testRestore === true;
}

/** Where a test restore went, and how to take it away again. */
interface Scratch {
  label: string;
  target: RestoreTarget;
  /** Original database name -> scratch database name (database targets). */
  databases: Map<string, string>;
  directory?: string;
  drop(): Promise<boolean>;
}

type Check = TestRestoreMetadata['checks'][number];

/**
 * A test restore: the job's newest backup is restored into its scratch target (a throwaway database or folder),
 * checked against the figures recorded at backup time, and the scratch is dropped whatever happened. The time from
 * the first byte read to the last check is the job's measured restore time (RTO). Any failed check fails the run.
 */
export async function runTestRestore(ctx: RunContext, services: RunServices, store: ExecutionStore): Promise<RunOutcome> {
  const request = JSON.parse(ctx.execution.request ?? '{}') as TestRestoreRequest;
  const storages: StorageInstance[] = [];
  let source: SourceAdapter | undefined;
  let scratch: Scratch | undefined;
  let found: FoundBackup | null = null;
  try {
    await ctx.enter('01-initialize', 0);
    const plan = await services.catalog.resolveRunPlan(request.jobId);
    const config = plan.job.testRestore;
    if (!config) throw new Error(`job "${plan.job.name}" has no test restore target (set testRestore on the job)`);
    storages.push(...plan.destinations.map((destination) => services.adapters.storage(destination)));
    found = await findLatestBackup(storages, plan.job.id, ctx.signal, (message) => ctx.log.warn(message));
    if (!found) throw new Error(`no backup of job "${plan.job.name}" was found on its destinations`);
    const targetConfig = await targetSourceOf(services, plan.source, config);
    source = services.adapters.source(targetConfig);
    await sweepLeftovers(ctx, store, config, targetConfig);
    scratch = await createScratch(config, targetConfig, found, scratchTag(ctx.execution.id));
    const record: TestRestoreMetadata = { file: found.key, storageId: found.storage.configId, target: scratch.label, checks: [] };
    ctx.metadata.testRestore = record;
    ctx.log.info(`test restore of ${found.key} (created ${found.sidecar.createdAt}) from ${found.storage.name} into ${scratch.label}`);

    const started = Date.now();
    await ctx.enter('02-download', 5);
    const codec = parseCompressionCodec(found.sidecar.compression?.codec ?? 'NONE');
    const profileId = found.sidecar.encryption?.profileId;
    if (found.sidecar.encryption && !profileId) throw new Error('the sidecar does not name the encryption profile of this backup');
    const key = profileId ? await services.catalog.encryptionKey(profileId) : null;
    const download = await found.storage.adapter.get(found.key, { signal: ctx.signal });
    await ctx.enter('03-restore', 10);
    const input = new PassThrough({ highWaterMark: 1024 * 1024 });
    const decoders = [...(key ? [createDecryptStream({ key })] : []), createDecompressStream(codec)];
    const piping = abortablePipeline(ctx.signal, download, new ChecksumGate(found.sidecar.sha256), ...decoders, input);
    piping.catch(() => undefined);
    const [result] = await Promise.all([source.restore(input, { target: scratch.target, signal: ctx.signal }), piping]);
    for (const warning of result.warnings) ctx.log.warn(`restore: ${warning}`);

    await ctx.enter('04-checks', 80);
    record.checks = await runChecks(targetConfig, scratch, found, config);
    record.durationMs = Date.now() - started;
    for (const check of record.checks) (check.ok ? ctx.log.info : ctx.log.error).call(ctx.log, `check ${check.name}: ${check.ok ? 'ok' : 'FAILED'} (${check.detail})`);
    const failed = record.checks.filter((check) => !check.ok);
    if (failed.length > 0) throw new Error(`test restore checks failed: ${failed.map((check) => `${check.name} (${check.detail})`).join('; ')}`);
    ctx.log.info(`test restore passed in ${record.durationMs} ms (measured restore time)`);
    return { status: 'Success', path: found.key, size: found.sidecar.size ?? null };
  } catch (error) {
    const cancelled = cancellationOf(ctx.signal);
    if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
    else ctx.log.error(`test restore failed: ${messageOf(error)}`);
    return { status: cancelled ? 'Cancelled' : 'Failed', path: found?.key ?? null };
  } finally {
    if (scratch) await cleanUp(ctx, scratch);
    await disposeAll([source, ...storages.map((s) => s.adapter)]);
  }
}

async function targetSourceOf(services: RunServices, jobSource: ResolvedAdapterConfig, config: TestRestoreConfig): Promise<ResolvedAdapterConfig> {
  if (config.target.type === 'directory') {
    if (!services.adapters.isFileArchive(jobSource.adapterId)) throw new Error(`a directory scratch target needs a directory source; the job's source is ${jobSource.adapterId}`);
    return jobSource;
  }
  const target = config.target.sourceId ? await services.catalog.resolveAdapterConfig(config.target.sourceId) : jobSource;
  if (!scratchDriverFor(target)) {
    throw new Error(`test restores into ${target.adapterId} sources${target.config.ssh ? ' reached over SSH' : ''} are not supported yet (PostgreSQL and MySQL/MariaDB without SSH, and directories, are)`);
  }
  // SPEC: excluded sources are never restore targets, not even for a throwaway database.
  if (target.excludeFromRestore) throw new Error(`source "${target.name}" is excluded from restores; name another server as the scratch target (testRestore.target.sourceId)`);
  return target;
}

/** Scratch names carry the first 12 hex digits of the execution id, so leftovers can be told from scratches in use. */
function scratchTag(executionId: string): string {
  return executionId.replace(/-/g, '').slice(0, 12).toLowerCase();
}

const SCRATCH_DATABASE = /^hf_test_restore_([0-9a-f]{12})_\d+$/;
const SCRATCH_FOLDER = /^holdfast-test-restore-([0-9a-f]{12})-/;

/**
 * Removes scratch databases and folders that a test restore interrupted by a crash left on this target. Only scratch
 * whose execution is in this installation's table and has ended is removed: a scratch in use, or one of another
 * installation sharing the server, is never touched. A failure here is logged and never fails the test restore.
 */
async function sweepLeftovers(ctx: RunContext, store: ExecutionStore, config: TestRestoreConfig, target: ResolvedAdapterConfig): Promise<void> {
  const ended = async (tag: string): Promise<boolean> => {
    const rows = await store.em().find(ExecutionEntity, { id: { $like: `${tag.slice(0, 8)}-${tag.slice(8, 12)}%` } }, { fields: ['id', 'status'] });
    return rows.length > 0 && rows.every((row) => FINAL_STATUSES.includes(row.status as ExecutionStatus));
  };
  try {
    if (config.target.type === 'directory') {
      const entries = await readdir(config.target.path).catch(() => [] as string[]);
      for (const name of entries) {
        const tag = SCRATCH_FOLDER.exec(name)?.[1];
        if (!tag || !(await ended(tag))) continue;
        await rm(join(config.target.path, name), { recursive: true, force: true });
        ctx.log.warn(`removed folder ${join(config.target.path, name)} left by an interrupted test restore`);
      }
      return;
    }
    const driver = scratchDriverFor(target)!;
    for (const name of await driver.listDatabases(target, 'hf_test_restore_')) {
      const tag = SCRATCH_DATABASE.exec(name)?.[1];
      if (!tag || !(await ended(tag))) continue;
      await driver.dropDatabase(target, name);
      ctx.log.warn(`dropped database ${name} on ${target.name} left by an interrupted test restore`);
    }
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    ctx.log.warn(`could not look for scratch left by interrupted test restores: ${messageOf(error)}`);
  }
}

async function createScratch(config: TestRestoreConfig, target: ResolvedAdapterConfig, found: FoundBackup, suffix: string): Promise<Scratch> {
  if (config.target.type === 'directory') {
    await mkdir(config.target.path, { recursive: true });
    const directory = await mkdtemp(join(config.target.path, `holdfast-test-restore-${suffix}-`));
    return {
      label: `folder ${directory}`,
      target: { path: directory },
      databases: new Map(),
      directory,
      drop: async () => {
        await rm(directory, { recursive: true, force: true });
        return access(directory).then(
          () => false,
          () => true,
        );
      },
    };
  }
  const originals = (found.sidecar.databases ?? []).length > 0 ? found.sidecar.databases! : ['restored'];
  const databases = new Map(originals.map((name, index) => [name, `hf_test_restore_${suffix}_${index}`]));
  const names = [...databases.values()];
  const driver = scratchDriverFor(target)!;
  return {
    label: `database${names.length > 1 ? 's' : ''} ${names.join(', ')} on ${target.name}`,
    target: originals.length === 1 ? { database: names[0], databaseMapping: Object.fromEntries(databases) } : { databaseMapping: Object.fromEntries(databases) },
    databases,
    drop: async () => {
      for (const name of names) await driver.dropDatabase(target, name);
      for (const name of names) if (await driver.databaseExists(target, name)) return false;
      return true;
    },
  };
}

async function runChecks(target: ResolvedAdapterConfig, scratch: Scratch, found: FoundBackup, config: TestRestoreConfig): Promise<Check[]> {
  const figures = found.sidecar.figures;
  if (scratch.directory) {
    const actual = await countFiles(scratch.directory);
    const expected = figures?.files;
    if (!expected) return [{ name: 'files present', ok: actual.count > 0, detail: `${actual.count} files, ${actual.bytes} bytes restored; no figures were recorded at backup time` }];
    return [
      { name: 'file count', ok: actual.count === expected.count, detail: `${actual.count} restored, ${expected.count} recorded at backup time` },
      { name: 'total size', ok: actual.bytes === expected.bytes, detail: `${actual.bytes} bytes restored, ${expected.bytes} recorded at backup time` },
    ];
  }
  const driver: ScratchDatabaseDriver = scratchDriverFor(target)!;
  const tolerance = Math.max(0, config.rowCountTolerancePercent ?? 0);
  const checks: Check[] = [];
  for (const [original, restored] of scratch.databases) {
    const actual = await driver.tableRowCounts(target, restored);
    const expected = figures?.databases?.[original];
    if (!expected) {
      checks.push({ name: `${original}: tables present`, ok: Object.keys(actual).length > 0, detail: `${Object.keys(actual).length} tables restored; no figures were recorded at backup time` });
      continue;
    }
    const missing = Object.keys(expected).filter((table) => !(table in actual));
    checks.push({ name: `${original}: tables present`, ok: missing.length === 0, detail: missing.length ? `missing: ${missing.join(', ')}` : `${Object.keys(expected).length} tables` });
    const off = Object.entries(expected)
      .filter(([table]) => table in actual)
      .filter(([table, rows]) => Math.abs(actual[table]! - rows) > (rows * tolerance) / 100)
      .map(([table, rows]) => `${table} ${actual[table]} vs ${rows}`);
    const total = Object.values(expected).reduce((sum, rows) => sum + rows, 0);
    checks.push({ name: `${original}: row counts`, ok: off.length === 0, detail: off.length ? `differ: ${off.join(', ')}` : `${total} rows in ${Object.keys(expected).length} tables match` });
  }
  return checks;
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
