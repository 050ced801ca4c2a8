import type { Readable } from 'node:stream';
import { AdapterError, toDumpHandle, type AdapterContext, type DumpHandle, type SshTarget } from '@holdfast/sdk';
import type { MssqlSourceConfig } from '../config.js';
import { openBackupFiles, serverPath, type BackupFiles } from './backup-files.js';
import { readDatabases, readVersion } from './catalog.js';
import { backupFileName } from './names.js';
import { ORIGIN } from './origin.js';
import { MssqlSession } from './session.js';
import { backupStatement } from './statements.js';

/** Picks the one database of a dump: a `.bak` holds one database, so several names are refused. */
export function chooseDatabase(config: MssqlSourceConfig, requested: string[], existing: Map<string, string>): string {
  if (requested.length > 1) {
    throw new AdapterError(ORIGIN, 'CONFIG', `a SQL Server backup holds one database; make one job per database instead of ${requested.join(', ')}`);
  }
  const wanted = requested[0] ?? config.database;
  if (!wanted) {
    if (existing.size === 1) return [...existing.keys()][0]!;
    throw new AdapterError(ORIGIN, 'CONFIG', `name the database to back up (set database or the job's databases); the server has ${[...existing.keys()].join(', ') || 'no user database'}`);
  }
  // Names compare as the server's (usually case-insensitive) collation does; an exact match wins.
  const found = existing.has(wanted) ? wanted : [...existing.keys()].find((name) => name.toLowerCase() === wanted.toLowerCase());
  if (!found) throw new AdapterError(ORIGIN, 'NOT_FOUND', `database "${wanted}" does not exist on the server (found: ${[...existing.keys()].join(', ') || 'none'})`);
  const state = existing.get(found);
  if (state !== 'ONLINE') throw new AdapterError(ORIGIN, 'CONFIG', `database "${found}" is ${state}, not ONLINE: it cannot be backed up`);
  return found;
}

/** Streams the finished `.bak` out, then deletes it from the server's disk whatever happened. */
async function* backupOutput(files: BackupFiles, name: string, cleanUp: () => Promise<void>): AsyncGenerator<Buffer> {
  let reader: Readable | undefined;
  try {
    reader = files.read(name);
    for await (const chunk of reader) yield chunk as Buffer;
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    const { code, message } = error as { code?: unknown; message: string };
    // SFTP status 3 is PERMISSION_DENIED: the file exists, but the service account wrote it unreadable for us.
    if (code === 3 || code === 'EACCES' || code === 'EPERM') {
      throw new AdapterError(ORIGIN, 'CONFIG', `cannot read ${files.location}/${name}, which SQL Server wrote: ${message} (see Permissions in the README)`, { cause: error });
    }
    throw new AdapterError(ORIGIN, 'TRANSIENT', `reading ${files.location}/${name} failed: ${message}`, { cause: error });
  } finally {
    reader?.destroy();
    await cleanUp();
  }
}

/**
 * Connects, checks login, version and database, reaches the backup directory, runs BACKUP DATABASE and resolves
 * once the first byte of the `.bak` arrived: every failure before that (wrong password, unreachable host or SSH,
 * unknown database, BACKUP refused) rejects here, before anything is uploaded.
 */
export async function startDump(
  config: MssqlSourceConfig,
  ssh: SshTarget | undefined,
  requested: string[],
  signal: AbortSignal,
  context: AdapterContext,
): Promise<DumpHandle> {
  const session = await MssqlSession.open(config, signal);
  let files: BackupFiles | undefined;
  let name: string | undefined;
  // Once only: the generator's finally and the catch below may both get here.
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => (cleaning ??= removeAndClose());
  const removeAndClose = async () => {
    if (files && name) {
      await files.remove(name).catch((error: unknown) =>
        context.logger.warn({ file: name, error: (error as Error).message }, 'could not delete the .bak from the server; remove it by hand'),
      );
    }
    await files?.close();
    await session.close();
  };
  try {
    const version = await readVersion(session, signal);
    const database = chooseDatabase(config, requested, await readDatabases(session, signal));
    files = await openBackupFiles(config, ssh, context.localPaths);
    await files.probe();
    name = backupFileName('backup', database);
    context.logger.info({ database, version: version.version, file: name, location: files.location }, 'starting BACKUP DATABASE');
    await session.query(backupStatement(database, serverPath(config, name), config), signal, `BACKUP DATABASE of "${database}"`);
    // The file is complete on the server: the TDS connection is not needed while it streams.
    await session.close();
    return await toDumpHandle(backupOutput(files, name, cleanUp), {
      origin: ORIGIN,
      signal,
      databases: [database],
      engineVersion: version.version,
      extension: '.bak',
    });
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
