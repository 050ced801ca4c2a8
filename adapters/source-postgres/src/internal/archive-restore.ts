import { Readable } from 'node:stream';
import { AdapterError, ArchiveError, openMember, type ArchiveRestoreInput, type ResolvedEntry, type Snapshot, type RestoreResult, type RestoreTarget } from '@holdfast/sdk';
import { GLOBALS_MEMBER } from './archive-dump.js';
import { ORIGIN } from './connection.js';
import { replayGlobals } from './globals.js';
import { databaseExists, readDumpHeader, restoreOne, type RestoreContext } from './restore.js';
import { StagedRestore } from './staged-restore.js';
import { refuseNewerSource } from './version-guard.js';

/** A database dump of the archive, with its database name known. */
type DumpEntry = ResolvedEntry & { database: string };

const quoted = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

/**
 * Restores the database dumps of a seekable archive snapshot, each read with one range read of its own bytes and
 * streamed into pg_restore like a plain dump, after the globals when the archive has them. Every input check
 * (unknown names in `include`, targets, the version guard before the globals) runs before anything is written, and
 * the databases go through staging databases swapped in only when all of them restored.
 */
export async function restoreArchiveSnapshot(context: RestoreContext, input: ArchiveRestoreInput, target: RestoreTarget): Promise<RestoreResult> {
  const staged = new StagedRestore(context);
  await staged.around(() => restoreSnapshotStaged(context, staged, input, target));
  return { warnings: context.warnings };
}

async function restoreSnapshotStaged(context: RestoreContext, staged: StagedRestore, input: ArchiveRestoreInput, target: RestoreTarget): Promise<void> {
  // The kernel carries the snapshot opaquely; it is the archive library's Snapshot the engine resolved.
  const snapshot = input.snapshot as Snapshot;
  const dumps = snapshot.entries.filter((entry): entry is DumpEntry => entry.kind === 'database-dump' && typeof entry.database === 'string');
  const globals = snapshot.entries.find((entry) => entry.kind === 'file' && entry.path === GLOBALS_MEMBER);
  if (dumps.length === 0) {
    throw new AdapterError(ORIGIN, 'CONFIG', 'the archive holds no database dump: it was not written by the PostgreSQL source, so there is nothing to restore');
  }
  const selected = selectDumps(dumps, globals !== undefined, input.include ?? []);
  const isGlobalsReplayed = globals !== undefined && context.config.restoreGlobals;
  if (selected.length === 0 && !isGlobalsReplayed) {
    throw new AdapterError(ORIGIN, 'CONFIG', `include names only the globals and restoreGlobals is off: nothing to restore`);
  }
  const targets = targetDatabases(selected, target);
  if (!context.config.restoreCreateDatabase) {
    for (const database of new Set(targets.values())) {
      if (!(await databaseExists(context, database))) {
        throw new AdapterError(ORIGIN, 'NOT_FOUND', `the target database "${database}" does not exist and restoreCreateDatabase is off; create it first or map the restore to an existing database. Nothing was written.`);
      }
    }
  }
  if (isGlobalsReplayed) {
    // Roles come before the first database (owners), so the version guard runs first, on a dump of the same run.
    await refuseNewerDump(context, input, selected[0] ?? dumps[0]!);
    await replayGlobals(context, memberStream(input, globals, 'the globals'));
  }
  for (const entry of selected) {
    await restoreOne(context, staged, memberStream(input, entry, `the dump of "${entry.database}"`), targets.get(entry.database)!);
  }
}

/**
 * The dumps `include` names (by database name or by archive path), in archive order; all of them when it is empty.
 * `globals.sql` is accepted as a name but selects no database: the globals follow `restoreGlobals`.
 */
function selectDumps(dumps: DumpEntry[], hasGlobals: boolean, include: readonly string[]): DumpEntry[] {
  if (include.length === 0) return dumps;
  const wanted = new Set<DumpEntry>();
  const unknown: string[] = [];
  for (const name of include) {
    if (hasGlobals && name === GLOBALS_MEMBER) continue;
    const found = dumps.find((entry) => entry.database === name || entry.path === name);
    if (found) wanted.add(found);
    else unknown.push(name);
  }
  if (unknown.length > 0) {
    const held = dumps.map((entry) => entry.database);
    throw new AdapterError(
      ORIGIN,
      'CONFIG',
      `include names ${unknown.length > 1 ? 'databases' : 'a database'} ${quoted(unknown)} that this archive does not hold; it holds ` +
        `the database${held.length > 1 ? 's' : ''} ${quoted(held)}${hasGlobals ? ` and the globals ("${GLOBALS_MEMBER}")` : ''}. Nothing was written.`,
    );
  }
  return dumps.filter((entry) => wanted.has(entry));
}

/**
 * Where each selected database goes: its `databaseMapping` entry, else `target.database` when one database is
 * restored, else its own name. Refuses an ambiguous `target.database` and two databases sent to one target.
 */
function targetDatabases(selected: DumpEntry[], target: RestoreTarget): Map<string, string> {
  const mapping = target.databaseMapping;
  if (target.database && !mapping && selected.length > 1) {
    throw new AdapterError(
      ORIGIN,
      'CONFIG',
      `target.database names one database but the restore selects ${selected.length} (${quoted(selected.map((entry) => entry.database))}): use databaseMapping, or name one database in include`,
    );
  }
  const single = selected.length === 1 ? target.database : undefined;
  const targets = new Map(selected.map((entry) => [entry.database, mapping?.[entry.database] ?? single ?? entry.database]));
  const seen = new Map<string, string>();
  for (const [source, database] of targets) {
    const other = seen.get(database);
    if (other !== undefined) {
      throw new AdapterError(ORIGIN, 'CONFIG', `"${other}" and "${source}" would both be restored into "${database}": map them to different databases`);
    }
    seen.set(database, source);
  }
  return targets;
}

/** Reads the pg_dump header of one dump (a few KiB of its range) and refuses a source newer than the target. */
async function refuseNewerDump(context: RestoreContext, input: ArchiveRestoreInput, entry: DumpEntry): Promise<void> {
  const { header, whole } = await readDumpHeader(memberStream(input, entry, `the dump of "${entry.database}"`));
  whole.destroy();
  await refuseNewerSource(header.serverVersion, context.targetVersion, 'the backup');
}

/** One member's content by a range read; a damaged member fails with CONFIG naming it instead of a bare tool error. */
function memberStream(input: ArchiveRestoreInput, entry: ResolvedEntry, what: string): Readable {
  const member = openMember(input.rangeReaderFor(entry.archive), entry);
  return Readable.from(
    (async function* checked() {
      try {
        for await (const chunk of member) yield chunk as Buffer;
      } catch (error) {
        if (!(error instanceof ArchiveError)) throw error;
        throw new AdapterError(ORIGIN, 'CONFIG', `${what} cannot be read from archive "${entry.archive}": ${error.message}`, { cause: error });
      }
    })(),
    { objectMode: false, highWaterMark: 1024 * 1024 },
  );
}
