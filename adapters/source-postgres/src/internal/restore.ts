import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { AdapterError, peekHead, type RestoreResult, type RestoreTarget, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, connectionArgs, scrub, withClient } from './connection.js';
import { parseDumpHeader, PGDMP_MAGIC, type DumpHeader } from './dump-header.js';
import { replayGlobals } from './globals.js';
import { FrameReader, isMultiDump, MULTI_MAGIC } from './multi-dump-format.js';
import { quoteLiteral, remoteQuery } from './remote-query.js';
import { StagedRestore, type RestoreInto } from './staged-restore.js';
import { startTool } from './tool-process.js';
import { harmlessTransactionTimeoutError } from './restore-quirks.js';
import { refuseNewerSource, type TargetVersion } from './version-guard.js';

/** The most bytes read to find a dump header: database names and version strings are short. */
const HEADER_LIMIT = 64 * 1024;

/** What one restore needs besides its input. */
export interface RestoreContext {
  config: PostgresSourceConfig;
  ssh: SshTarget | undefined;
  signal: AbortSignal;
  /** The target server's version, asked once (the guard needs it before anything is written). */
  targetVersion: TargetVersion;
  warnings: string[];
  /** Something worth a line in the server log that did not change what was restored (so not a warning). */
  note?: (message: string) => void;
  /** `RestoreOptions.overwrite` (see {@link StagedRestore}). */
  overwrite?: boolean;
}

/** True when the target database exists. */
export async function databaseExists(context: RestoreContext, database: string): Promise<boolean> {
  const { config, ssh } = context;
  if (ssh) {
    const found = await remoteQuery(config, ssh, config.maintenanceDatabase, `SELECT 1 FROM pg_database WHERE datname = ${quoteLiteral(database)}`);
    return found.length > 0;
  }
  return withClient(config, config.maintenanceDatabase, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    return (found.rowCount ?? 0) > 0;
  });
}

/** pg_restore's options from the config: clean, owners and grants. */
function restoreArgs(config: PostgresSourceConfig): string[] {
  return [...(config.restoreClean ? ['--clean', '--if-exists'] : []), ...(config.restoreNoOwner ? ['--no-owner', '--no-privileges'] : [])];
}

/** The header of a custom-format dump at the start of `input`, plus the input to restore from. */
export async function readDumpHeader(input: Readable): Promise<{ header: DumpHeader; whole: Readable }> {
  const parsed = (head: Buffer) => {
    try {
      return parseDumpHeader(head);
    } catch (error) {
      throw new AdapterError(ORIGIN, 'CONFIG', `the backup cannot be restored: ${(error as Error).message}`);
    }
  };
  const { head, whole } = await peekHead(input, { enough: (bytes) => parsed(bytes) !== undefined, limit: HEADER_LIMIT });
  const header = parsed(head);
  if (!header) {
    whole.destroy();
    throw new AdapterError(ORIGIN, 'CONFIG', 'the backup cannot be restored: its pg_dump header is truncated');
  }
  return { header, whole };
}

/**
 * Feeds one `pg_dump -Fc` stream into `pg_restore` on `database`. The dump's header is read first: a dump of a
 * newer major than the target server is refused before the database is created or pg_restore starts. pg_restore
 * writes where {@link StagedRestore.prepare} says: a staging database, or an existing target merged in one transaction.
 */
export async function restoreOne(context: RestoreContext, staged: StagedRestore, input: Readable, database: string): Promise<void> {
  const { config, ssh, signal } = context;
  const { header, whole } = await readDumpHeader(input);
  let into: RestoreInto;
  try {
    await refuseNewerSource(header.serverVersion, context.targetVersion, `the dump of "${header.database ?? database}"`);
    into = await staged.prepare(database);
  } catch (error) {
    whole.destroy();
    throw error;
  }
  const args = [...restoreArgs(config), ...into.args, ...connectionArgs(config, into.database)];
  const tool = await startTool(config, ssh, 'pg_restore', args, signal);
  tool.stdout.resume();
  try {
    await pipeline(whole, tool.stdin, { signal });
    const code = await tool.exited;
    const harmless = code === 1 ? harmlessTransactionTimeoutError(tool.stderrTail(), await context.targetVersion()) : null;
    // Not a warning: nothing was left out of the restore (a warning would make the run Partial).
    if (harmless) context.note?.(`restore into "${database}": ${harmless}`);
    else if (code !== 0) {
      throw new AdapterError(ORIGIN, 'TRANSIENT', `pg_restore into "${database}" failed (exit ${String(code)}): ${scrub(tool.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `restore into "${database}" was aborted`);
    if (error instanceof AdapterError) throw error;
    const detail = tool.stderrTail() || (error instanceof Error ? error.message : String(error));
    throw new AdapterError(ORIGIN, 'TRANSIENT', `pg_restore into "${database}" failed: ${scrub(detail, config)}`, { cause: error });
  } finally {
    await tool.stop();
  }
}

/**
 * Restores a plain dump into `target.database` (or the mapping of the database named in its header, else that name), or every
 * database of a multi-dump through `databaseMapping`, after its globals when it has them. All or nothing: every
 * database goes into a staging database first and the targets are replaced only when all of them restored.
 */
export async function restoreDump(context: RestoreContext, stream: Readable, target: RestoreTarget): Promise<RestoreResult> {
  const staged = new StagedRestore(context);
  await staged.around(() => restoreDumpStaged(context, staged, stream, target));
  return { warnings: context.warnings };
}

async function restoreDumpStaged(context: RestoreContext, staged: StagedRestore, stream: Readable, target: RestoreTarget): Promise<void> {
  const { head, whole } = await peekHead(stream, MULTI_MAGIC.length);
  if (head.length === 0) throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is empty: nothing to restore');
  if (!isMultiDump(head)) {
    if (!head.subarray(0, PGDMP_MAGIC.length).equals(PGDMP_MAGIC)) {
      whole.destroy();
      throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is neither a pg_dump custom-format archive nor a Holdfast multi-database dump');
    }
    const { header, whole: dump } = await readDumpHeader(whole);
    const mapping = target.databaseMapping ?? {};
    // No target given: the database's own name, as the dump's header records it (what the restore dialog says).
    const database = target.database ?? (header.database ? mapping[header.database] : undefined) ?? Object.values(mapping)[0] ?? header.database;
    if (!database) {
      dump.destroy();
      throw new AdapterError(ORIGIN, 'CONFIG', 'restore needs a target database name');
    }
    await restoreOne(context, staged, dump, database);
    return;
  }
  await restoreFrames(context, staged, whole, target);
}

/** The section of a multi-dump being restored: its body feeds a restore that runs alongside the frame reader. */
interface Section {
  body: PassThrough;
  restoring: Promise<void>;
}

function startSection(run: (body: PassThrough) => Promise<void>): Section {
  // Small, like the engine's restore input: pieces that wait longer are moved to V8's old generation and cost full
  // collections (docs/benchmarks.md, "Restore input buffer").
  const body = new PassThrough({ highWaterMark: 64 * 1024 });
  const restoring = run(body);
  restoring.catch(() => undefined);
  return { body, restoring };
}

function headerJson(payload: Buffer): { name?: string; serverVersion?: string } {
  try {
    return JSON.parse(payload.toString('utf8')) as { name?: string; serverVersion?: string };
  } catch {
    throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt multi-dump: a section header is not JSON');
  }
}

/** Splits a multi-dump into its globals and databases and restores them one after another. */
async function restoreFrames(context: RestoreContext, staged: StagedRestore, input: Readable, target: RestoreTarget): Promise<void> {
  const reader = new FrameReader();
  let current: Section | undefined;
  let finished = false;
  let sawDatabase = false;
  // Without a mapping, target.database names where the (single) database of the archive goes.
  let singleTarget = target.databaseMapping ? undefined : target.database;
  try {
    for await (const chunk of input) {
      let frames;
      try {
        frames = reader.push(chunk as Buffer);
      } catch (error) {
        throw new AdapterError(ORIGIN, 'CONFIG', `the backup cannot be restored: ${(error as Error).message}`);
      }
      for (const frame of frames) {
        if (frame.type === 'G') {
          if (sawDatabase) throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt multi-dump: globals after a database');
          const { serverVersion } = headerJson(frame.payload);
          // The globals come first: the version guard runs before any role is created.
          await refuseNewerSource(serverVersion, context.targetVersion, 'the backup');
          current = context.config.restoreGlobals ? startSection((body) => replayGlobals(context, body)) : startSection(async (body) => void body.resume());
        } else if (frame.type === 'D') {
          const { name, serverVersion } = headerJson(frame.payload);
          if (!name) throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt multi-dump: a database header has no name');
          await refuseNewerSource(serverVersion, context.targetVersion, `the dump of "${name}"`);
          if (sawDatabase && target.database && !target.databaseMapping) {
            throw new AdapterError(ORIGIN, 'CONFIG', `target.database names one database but the backup holds several (next: "${name}"): use databaseMapping`);
          }
          const database = target.databaseMapping?.[name] ?? singleTarget ?? name;
          singleTarget = undefined;
          sawDatabase = true;
          current = startSection((body) => restoreOne(context, staged, body, database));
        } else if (frame.type === 'C') {
          if (!current) throw new AdapterError(ORIGIN, 'CONFIG', 'corrupt multi-dump: data before a section header');
          // Waiting on drain alone would hang if the tool died; its failure ends the wait too.
          if (!current.body.write(frame.payload)) await Promise.race([once(current.body, 'drain'), current.restoring]);
        } else if (frame.type === 'E') {
          current?.body.end();
          await current?.restoring;
          current = undefined;
        } else {
          finished = true;
        }
      }
    }
  } catch (error) {
    current?.body.destroy();
    // The section may still be creating its staging database: it must be known before the restore discards them.
    await current?.restoring.catch(() => undefined);
    throw error;
  }
  if (!finished || reader.pendingBytes > 0) {
    current?.body.destroy();
    await current?.restoring.catch(() => undefined);
    throw new AdapterError(ORIGIN, 'CONFIG', 'the multi-database dump is truncated (no end marker)');
  }
}
