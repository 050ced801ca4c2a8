import { access, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ResolvedAdapterConfig, RestoreTarget, TestRestoreConfig } from '@holdfast/kernel';
import { countFiles } from './archive-figures.js';
import type { FoundBackup } from './latest-backup.js';
import { keyFigures, redisServerOf, SCRATCH_MARKER_KEY, withRedis } from './redis-scratch.js';
import { fileChecks, keyChecks, tableChecks, type Check } from './scratch-checks.js';
import { scratchDriverFor } from './scratch-driver.js';
import { sqliteIntegrityCheck, sqliteTableRowCounts } from './sqlite-scratch.js';

/** Where a test restore went, how to check it and how to take it away again. */
export interface Scratch {
  label: string;
  target: RestoreTarget;
  check(): Promise<Check[]>;
  /** Removes the scratch; true once it is verifiably gone. */
  drop(): Promise<boolean>;
}

/** What creating a scratch needs besides the job's configuration. */
export interface ScratchContext {
  config: TestRestoreConfig;
  /** The server or source the backup is restored through (the scratch server, or the job's own source). */
  target: ResolvedAdapterConfig;
  /** The job's source (what was backed up). */
  jobSource: ResolvedAdapterConfig;
  found: FoundBackup;
  executionId: string;
  /** True when `executionId` is an execution of this installation that has ended. */
  executionEnded(executionId: string): Promise<boolean>;
  log(message: string): void;
}

/** Scratch names carry the first 12 hex digits of the execution id, so leftovers can be told from scratches in use. */
export function scratchTag(executionId: string): string {
  return executionId.replace(/-/g, '').slice(0, 12).toLowerCase();
}

export const SCRATCH_DATABASE = /^hf_test_restore_([0-9a-f]{12})_\d+$/;
export const SCRATCH_FOLDER = /^holdfast-test-restore-([0-9a-f]{12})-/;

/** Creates the scratch of the job's target type (the caller has checked the target fits the job). */
export function createScratch(context: ScratchContext): Promise<Scratch> {
  switch (context.config.target.type) {
    case 'directory':
      return directoryScratch(context.config.target.path, context);
    case 'sqlite':
      return sqliteScratch(context.config.target.path, context);
    case 'redis':
      return redisScratch(context.config.target.database, context);
    case 'database':
      return Promise.resolve(databaseScratch(context));
  }
}

/** A throwaway folder below `parent`, named after the execution, removed with everything in it. */
async function scratchFolder(parent: string, executionId: string): Promise<{ directory: string; drop(): Promise<boolean> }> {
  await mkdir(parent, { recursive: true });
  const directory = await mkdtemp(join(parent, `holdfast-test-restore-${scratchTag(executionId)}-`));
  return {
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

async function directoryScratch(parent: string, context: ScratchContext): Promise<Scratch> {
  const folder = await scratchFolder(parent, context.executionId);
  return {
    label: `folder ${folder.directory}`,
    target: { path: folder.directory },
    check: async () => fileChecks(await countFiles(folder.directory), context.found.sidecar.figures?.files),
    drop: folder.drop,
  };
}

/** SQLite: the database file is restored into a throwaway folder (with the restore's temp and side files). */
async function sqliteScratch(parent: string, context: ScratchContext): Promise<Scratch> {
  const original = context.found.sidecar.databases?.[0] ?? context.jobSource.config.path;
  if (typeof original !== 'string') throw new Error('the sidecar does not name the backed-up SQLite file');
  const folder = await scratchFolder(parent, context.executionId);
  const file = join(folder.directory, basename(original));
  return {
    label: `file ${file}`,
    target: { path: file },
    check: async () => {
      // The restore already refused a file failing it; checked again on what is actually in the scratch.
      const integrity = await sqliteIntegrityCheck(context.target, file);
      const checks: Check[] = [{ name: 'integrity_check', ok: integrity === 'ok', detail: integrity }];
      return [...checks, ...(await tableChecks(new Map([[original, file]]), (restored) => sqliteTableRowCounts(context.target, restored), context.found.sidecar.figures, tolerance(context.config)))];
    },
    drop: folder.drop,
  };
}

/** PostgreSQL and MySQL/MariaDB: one throwaway database per dumped database on the scratch server. */
function databaseScratch(context: ScratchContext): Scratch {
  const originals = (context.found.sidecar.databases ?? []).length > 0 ? context.found.sidecar.databases! : ['restored'];
  const databases = new Map(originals.map((name, index) => [name, `hf_test_restore_${scratchTag(context.executionId)}_${index}`]));
  const names = [...databases.values()];
  const driver = scratchDriverFor(context.target)!;
  return {
    label: `database${names.length > 1 ? 's' : ''} ${names.join(', ')} on ${context.target.name}`,
    target: originals.length === 1 ? { database: names[0], databaseMapping: Object.fromEntries(databases) } : { databaseMapping: Object.fromEntries(databases) },
    check: () => tableChecks(databases, (restored) => driver.tableRowCounts(context.target, restored), context.found.sidecar.figures, tolerance(context.config)),
    drop: async () => {
      for (const name of names) await driver.dropDatabase(context.target, name);
      for (const name of names) if (await driver.databaseExists(context.target, name)) return false;
      return true;
    },
  };
}

/**
 * Redis: the one database index reserved for test restores. It must be empty, or hold only what a crashed test
 * restore of this installation left (its marker names an execution that has ended; then it is flushed first). Data
 * of anyone else is never flushed: the test restore fails instead. The marker is written before restoring, so a
 * crash from here on is recognised by the next test restore.
 */
async function redisScratch(index: number, context: ScratchContext): Promise<Scratch> {
  const { target, jobSource, found } = context;
  const where = `database ${index} of Redis ${target.name}`;
  const originals = found.sidecar.databases ?? [];
  if (originals.length > 1) {
    throw new Error(`this backup holds Redis databases ${originals.join(', ')}; a Redis scratch target is one database index, so it takes backups of one database (one job per database)`);
  }
  const sameServer = target.configId === jobSource.configId || redisServerOf(target) === redisServerOf(jobSource);
  const backedUp = originals.length > 0 ? originals : [String((jobSource.config.database as number | undefined) ?? 0)];
  if (sameServer && backedUp.includes(String(index))) {
    throw new Error(`${where} is the database this job backs up; name an index reserved for test restores (testRestore.target.database)`);
  }
  await withRedis(target, index, async (client) => {
    const size = await client.dbsize();
    if (size > 0) {
      const owner = await client.get(SCRATCH_MARKER_KEY);
      if (!owner || owner === context.executionId || !(await context.executionEnded(owner))) {
        throw new Error(
          owner && owner !== context.executionId
            ? `${where} is in use by test restore ${owner}, which has not ended`
            : `${where} holds ${size} key(s) that no test restore of this installation left: a scratch index must be empty (it is flushed after each test restore); empty it or name another index`,
        );
      }
      await client.flushdb();
      context.log(`flushed ${where} left by the interrupted test restore ${owner}`);
    }
    await client.set(SCRATCH_MARKER_KEY, context.executionId);
  });
  const original = originals[0] ?? backedUp[0]!;
  return {
    label: where,
    target: { database: String(index), databaseMapping: { [original]: String(index) } },
    check: async () => {
      const restored = await keyFigures(target, index);
      // The marker is ours, not restored data (it has no expiry).
      const data = { keys: Math.max(0, restored.keys - 1), expires: restored.expires };
      const recorded = found.sidecar.figures?.databases?.[original];
      const expected = recorded && typeof recorded.keys === 'number' ? { keys: recorded.keys, expires: recorded.expires ?? 0 } : undefined;
      return keyChecks(original, data, expected, tolerance(context.config));
    },
    drop: () =>
      withRedis(target, index, async (client) => {
        await client.flushdb();
        return (await client.dbsize()) === 0;
      }),
  };
}

function tolerance(config: TestRestoreConfig): number {
  return Math.max(0, config.rowCountTolerancePercent ?? 0);
}

/**
 * Removes scratch databases and folders that a test restore interrupted by a crash left on this target. Only scratch
 * whose execution is in this installation's table and has ended is removed: a scratch in use, or one of another
 * installation sharing the server, is never touched. Redis scratch indexes are handled when the scratch is created
 * (one index, recognised by its marker key). Resolves what was removed, for the log.
 */
export async function sweepLeftovers(config: TestRestoreConfig, target: ResolvedAdapterConfig, tagEnded: (tag: string) => Promise<boolean>): Promise<string[]> {
  const removed: string[] = [];
  if (config.target.type === 'directory' || config.target.type === 'sqlite') {
    const parent = config.target.path;
    const entries = await readdir(parent).catch(() => [] as string[]);
    for (const name of entries) {
      const tag = SCRATCH_FOLDER.exec(name)?.[1];
      if (!tag || !(await tagEnded(tag))) continue;
      await rm(join(parent, name), { recursive: true, force: true });
      removed.push(`removed folder ${join(parent, name)} left by an interrupted test restore`);
    }
    return removed;
  }
  if (config.target.type !== 'database') return removed;
  const driver = scratchDriverFor(target)!;
  for (const name of await driver.listDatabases(target, 'hf_test_restore_')) {
    const tag = SCRATCH_DATABASE.exec(name)?.[1];
    if (!tag || !(await tagEnded(tag))) continue;
    await driver.dropDatabase(target, name);
    removed.push(`dropped database ${name} on ${target.name} left by an interrupted test restore`);
  }
  return removed;
}
