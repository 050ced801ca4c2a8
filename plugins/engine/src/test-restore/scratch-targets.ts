import { access, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type {
  ResolvedAdapterConfig,
  RestoreTarget,
  ScratchDatabaseFile,
  ScratchDatabaseIndex,
  ScratchDatabaseServer,
  ScratchFolders,
  SourceScratch,
  TestRestoreConfig,
} from '@holdfast/kernel';
import { countFiles } from './archive-figures.js';
import type { FoundBackup } from './latest-backup.js';
import { fileChecks, keyChecks, tableChecks, type Check } from './scratch-checks.js';

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
  /** The target's scratch (null for a directory target, whose scratch is a folder the engine makes itself). */
  scratch: SourceScratch | null;
  /** The job source's scratch server, to refuse an index target that is the backed-up database itself. */
  jobServer?: string;
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

/** Creates the scratch of the job's target type (the caller has checked the target's scratch fits it). */
export function createScratch(context: ScratchContext): Promise<Scratch> {
  const { target } = context.config;
  const scratch = context.scratch;
  if (target.type === 'directory') return directoryScratch(target.path, context);
  if (target.type === 'sqlite' && scratch?.placement === 'file') return fileScratch(target.path, scratch, context);
  if (target.type === 'redis' && scratch?.placement === 'index') return indexScratch(target.database, scratch, context);
  if (target.type === 'database' && scratch?.placement === 'database') return Promise.resolve(databaseScratch(scratch, context));
  return Promise.reject(new Error(`a ${target.type} scratch target does not fit the scratch of ${context.target.name}`));
}

/** The integrity check of a restored database, when its engine has one. */
async function integrityChecks(scratch: SourceScratch, database: string): Promise<Check[]> {
  const integrity = await scratch.integrityCheck(database);
  return integrity === null ? [] : [{ name: 'integrity_check', ok: integrity === 'ok', detail: integrity }];
}

/** A throwaway folder below `parent`, named after the execution, removed with everything in it. */
async function scratchFolder(parent: string, executionId: string, elsewhere?: ScratchFolders): Promise<{ directory: string; drop(): Promise<boolean> }> {
  if (elsewhere) {
    // The scratch file lives where its source runs (a remote agent's disk), not on this server's.
    const directory = await elsewhere.create(parent, `holdfast-test-restore-${scratchTag(executionId)}-`);
    return { directory, drop: () => elsewhere.remove(directory) };
  }
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

/** A database file (SQLite): restored into a throwaway folder (with the restore's temp and side files). */
async function fileScratch(parent: string, scratch: ScratchDatabaseFile, context: ScratchContext): Promise<Scratch> {
  const original = context.found.sidecar.databases?.[0];
  if (!original) throw new Error('the sidecar does not name the backed-up database file');
  const folder = await scratchFolder(parent, context.executionId, scratch.folders);
  const file = join(folder.directory, basename(original));
  return {
    label: `file ${file}`,
    target: { path: file },
    check: async () => [
      // The restore may have checked the file already; checked again on what is actually in the scratch.
      ...(await integrityChecks(scratch, file)),
      ...(await tableChecks(new Map([[original, file]]), (restored) => scratch.figures(restored), context.found.sidecar.figures, tolerance(context.config))),
    ],
    drop: folder.drop,
  };
}

/** Throwaway databases (PostgreSQL, MySQL/MariaDB...): one per dumped database on the scratch server. */
function databaseScratch(scratch: ScratchDatabaseServer, context: ScratchContext): Scratch {
  const originals = (context.found.sidecar.databases ?? []).length > 0 ? context.found.sidecar.databases! : ['restored'];
  const databases = new Map(originals.map((name, index) => [name, `hf_test_restore_${scratchTag(context.executionId)}_${index}`]));
  const names = [...databases.values()];
  return {
    label: `database${names.length > 1 ? 's' : ''} ${names.join(', ')} on ${context.target.name}`,
    target: originals.length === 1 ? { database: names[0], databaseMapping: Object.fromEntries(databases) } : { databaseMapping: Object.fromEntries(databases) },
    check: async () => {
      const integrity: Check[] = [];
      for (const name of names) integrity.push(...(await integrityChecks(scratch, name)));
      return [...integrity, ...(await tableChecks(databases, (restored) => scratch.figures(restored), context.found.sidecar.figures, tolerance(context.config)))];
    },
    drop: async () => {
      for (const name of names) await scratch.dropDatabase(name);
      for (const name of names) if (await scratch.databaseExists(name)) return false;
      return true;
    },
  };
}

/**
 * A reserved database index (Redis): it must be empty, or hold only what a crashed test restore of this
 * installation left (its owner names an execution that has ended; then it is emptied first). Data of anyone else is
 * never removed: the test restore fails instead. The owner is written before restoring, so a crash from here on is
 * recognised by the next test restore.
 */
async function indexScratch(index: number, scratch: ScratchDatabaseIndex, context: ScratchContext): Promise<Scratch> {
  const { target, jobSource, found } = context;
  const database = String(index);
  const where = `database ${index} of ${target.name}`;
  const originals = found.sidecar.databases ?? [];
  if (originals.length > 1) {
    throw new Error(`this backup holds databases ${originals.join(', ')}; a scratch index is one database, so it takes backups of one database (one job per database)`);
  }
  const sameServer = target.configId === jobSource.configId || scratch.server === context.jobServer;
  // Every dump names its databases in the sidecar; a scratch index never takes a backup that does not.
  const original = originals[0];
  if (!original) throw new Error('the sidecar does not name the backed-up database');
  if (sameServer && original === database) {
    throw new Error(`${where} is the database this job backs up; name an index reserved for test restores (testRestore.target.database)`);
  }
  const size = (await scratch.figures(database)).keys ?? 0;
  if (size > 0) {
    const owner = await scratch.readOwner(database);
    if (!owner || owner === context.executionId || !(await context.executionEnded(owner))) {
      throw new Error(
        owner && owner !== context.executionId
          ? `${where} is in use by test restore ${owner}, which has not ended`
          : `${where} holds ${size} key(s) that no test restore of this installation left: a scratch index must be empty (it is flushed after each test restore); empty it or name another index`,
      );
    }
    await scratch.dropDatabase(database);
    context.log(`flushed ${where} left by the interrupted test restore ${owner}`);
  }
  await scratch.writeOwner(database, context.executionId);
  return {
    label: where,
    target: { database, databaseMapping: { [original]: database } },
    check: async () => {
      const restored = await scratch.figures(database);
      // The owner key is ours, not restored data (it has no expiry).
      const data = { keys: Math.max(0, (restored.keys ?? 0) - 1), expires: restored.expires ?? 0 };
      const recorded = found.sidecar.figures?.databases?.[original];
      const expected = recorded && typeof recorded.keys === 'number' ? { keys: recorded.keys, expires: recorded.expires ?? 0 } : undefined;
      return keyChecks(original, data, expected, tolerance(context.config));
    },
    drop: async () => {
      await scratch.dropDatabase(database);
      return ((await scratch.figures(database)).keys ?? 0) === 0;
    },
  };
}

function tolerance(config: TestRestoreConfig): number {
  return Math.max(0, config.rowCountTolerancePercent ?? 0);
}

/**
 * Removes scratch databases and folders that a test restore interrupted by a crash left on this target. Only scratch
 * whose execution is in this installation's table and has ended is removed: a scratch in use, or one of another
 * installation sharing the server, is never touched. Scratch indexes are handled when the scratch is created (one
 * index, recognised by its owner key). Resolves what was removed, for the log.
 */
export async function sweepLeftovers(
  config: TestRestoreConfig,
  target: { config: ResolvedAdapterConfig; scratch: SourceScratch | null },
  tagEnded: (tag: string) => Promise<boolean>,
): Promise<string[]> {
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
  const scratch = target.scratch;
  if (config.target.type !== 'database' || scratch?.placement !== 'database') return removed;
  for (const name of await scratch.listDatabases('hf_test_restore_')) {
    const tag = SCRATCH_DATABASE.exec(name)?.[1];
    if (!tag || !(await tagEnded(tag))) continue;
    await scratch.dropDatabase(name);
    removed.push(`dropped database ${name} on ${target.config.name} left by an interrupted test restore`);
  }
  return removed;
}
