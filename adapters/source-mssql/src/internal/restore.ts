import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, peekHead, type AdapterContext, type RestoreOptions, type RestoreResult, type SshTarget } from '@holdfast/sdk';
import type { MssqlSourceConfig } from '../config.js';
import { openBackupFiles, serverPath, type BackupFiles } from './backup-files.js';
import { majorOf, readDatabases, readVersion } from './catalog.js';
import { backupFileName, fileSafe } from './names.js';
import { ORIGIN } from './origin.js';
import { MssqlSession } from './session.js';
import {
  DEFAULT_PATHS_QUERY,
  fileListOnlyStatement,
  headerOnlyStatement,
  multiUserStatement,
  restoreStatement,
  singleUserStatement,
  type FileMove,
} from './statements.js';

/** Every Microsoft Tape Format file (what BACKUP TO DISK writes) starts with a TAPE descriptor block. */
const MTF_MAGIC = Buffer.from('TAPE', 'latin1');

interface BackupFileRow {
  LogicalName: unknown;
  PhysicalName: unknown;
  Type: unknown;
}

/** Separator and extension helpers for a server-side path (Windows or Linux). */
function joinServerPath(directory: string, name: string): string {
  const separator = directory.includes('\\') || /^[A-Za-z]:/.test(directory) ? '\\' : '/';
  return directory.endsWith('\\') || directory.endsWith('/') ? `${directory}${name}` : `${directory}${separator}${name}`;
}

function extensionOf(physicalName: string, type: string, isFirstData: boolean): string {
  const base = physicalName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  if (dot > 0) return base.slice(dot);
  if (type === 'L') return '.ldf';
  if (type === 'D') return isFirstData ? '.mdf' : '.ndf';
  return ''; // FILESTREAM containers and full-text catalogs are directories.
}

/** New physical paths for every file of the backup, named after the target database so two copies never collide. */
export function planMoves(target: string, files: BackupFileRow[], dataDirectory: string, logDirectory: string): FileMove[] {
  const used = new Set<string>();
  let seenData = false;
  return files.map((file) => {
    const logicalName = String(file.LogicalName);
    const type = String(file.Type).trim().toUpperCase();
    const extension = extensionOf(String(file.PhysicalName ?? ''), type, type === 'D' && !seenData);
    if (type === 'D') seenData = true;
    let stem = `${fileSafe(target)}_${fileSafe(logicalName)}`;
    for (let n = 2; used.has(`${stem}${extension}`.toLowerCase()); n++) stem = `${fileSafe(target)}_${fileSafe(logicalName)}_${n}`;
    used.add(`${stem}${extension}`.toLowerCase());
    return { logicalName, physicalName: joinServerPath(type === 'L' ? logDirectory : dataDirectory, `${stem}${extension}`) };
  });
}

/** Name of the restored database: the explicit target, else the mapping of the original name, else the original. */
function targetName(options: RestoreOptions, original: string): string {
  return options.target.database ?? options.target.databaseMapping?.[original] ?? original;
}

function existingName(existing: Map<string, string>, name: string): string | undefined {
  return existing.has(name) ? name : [...existing.keys()].find((other) => other.toLowerCase() === name.toLowerCase());
}

function refuseOverwrite(config: MssqlSourceConfig, existing: Map<string, string>, name: string): void {
  const found = existingName(existing, name);
  if (found && !config.replaceExisting) {
    throw new AdapterError(ORIGIN, 'CONFIG', `database "${found}" already exists; restore into another name or set replaceExisting to overwrite it`);
  }
}

/**
 * Uploads the `.bak` into the server's backup directory (SFTP or the shared mount), reads its header and file list,
 * and runs RESTORE DATABASE ... WITH MOVE; the uploaded file is deleted afterwards whatever happened.
 */
export async function restoreBackup(
  config: MssqlSourceConfig,
  ssh: SshTarget | undefined,
  stream: Readable,
  options: RestoreOptions,
  context: AdapterContext,
): Promise<RestoreResult> {
  const { signal } = options;
  const warnings: string[] = [];
  const session = await MssqlSession.open(config, signal);
  let files: BackupFiles | undefined;
  let name: string | undefined;
  try {
    const version = await readVersion(session, signal);
    const existing = await readDatabases(session, signal);
    // A named target is checked before anything is uploaded.
    if (options.target.database) refuseOverwrite(config, existing, options.target.database);
    const { head, whole } = await peekHead(stream, MTF_MAGIC.length);
    if (!head.subarray(0, MTF_MAGIC.length).equals(MTF_MAGIC)) {
      whole.destroy();
      throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is not a SQL Server .bak file (no Microsoft Tape Format TAPE header)');
    }
    files = await openBackupFiles(config, ssh, context.localPaths);
    await files.probe();
    name = backupFileName('restore', options.target.database ?? 'upload');
    await pipeline(whole, files.write(name), { signal }).catch((error: unknown) => {
      if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the restore was aborted during the upload');
      throw new AdapterError(ORIGIN, 'TRANSIENT', `uploading the .bak to ${files!.location} failed: ${(error as Error).message}`, { cause: error });
    });
    const file = serverPath(config, name);

    const headers = await session.query<{ DatabaseName: unknown; SoftwareVersionMajor: unknown }>(headerOnlyStatement(file), signal, 'RESTORE HEADERONLY');
    if (headers.length === 0) throw new AdapterError(ORIGIN, 'CONFIG', 'the .bak holds no backup set');
    if (headers.length > 1) warnings.push(`the .bak holds ${headers.length} backup sets; the first one was restored`);
    const original = String(headers[0]!.DatabaseName);
    const backupMajor = Number(headers[0]!.SoftwareVersionMajor);
    if (Number.isFinite(backupMajor) && backupMajor > majorOf(version.version)) {
      throw new AdapterError(ORIGIN, 'CONFIG', `the backup was made by SQL Server major version ${backupMajor}; this server (${version.version}) is older and cannot restore it`);
    }
    const target = targetName(options, original);
    refuseOverwrite(config, existing, target);

    const backupFiles = await session.query<BackupFileRow>(fileListOnlyStatement(file), signal, 'RESTORE FILELISTONLY');
    let dataDirectory = config.restoreDataDirectory;
    let logDirectory = config.restoreLogDirectory;
    if (!dataDirectory || !logDirectory) {
      const [paths] = await session.query<{ dataPath: unknown; logPath: unknown }>(DEFAULT_PATHS_QUERY, signal, 'reading the default data paths');
      dataDirectory ??= typeof paths?.dataPath === 'string' && paths.dataPath ? paths.dataPath : undefined;
      logDirectory ??= typeof paths?.logPath === 'string' && paths.logPath ? paths.logPath : dataDirectory;
    }
    if (!dataDirectory || !logDirectory) {
      throw new AdapterError(ORIGIN, 'CONFIG', 'the server reports no default data path; set restoreDataDirectory and restoreLogDirectory');
    }
    const moves = planMoves(target, backupFiles, dataDirectory, logDirectory);

    const replaced = existingName(existing, target);
    if (replaced) await session.query(singleUserStatement(replaced), signal, `taking "${replaced}" to single-user mode`);
    context.logger.info({ database: target, from: original, files: moves.length }, 'starting RESTORE DATABASE');
    try {
      await session.query(restoreStatement(replaced ?? target, file, moves, Boolean(replaced)), signal, `RESTORE DATABASE into "${target}"`);
    } catch (error) {
      // A replace that failed may leave the old database single-user: give it back (it may also be gone or RESTORING).
      if (replaced) await session.query(multiUserStatement(replaced)).catch(() => undefined);
      throw error;
    }
    if (replaced) warnings.push(`database "${replaced}" was replaced`);
    return { warnings };
  } finally {
    if (files && name) {
      await files.remove(name).catch((error: unknown) =>
        context.logger.warn({ file: name, error: (error as Error).message }, 'could not delete the uploaded .bak; remove it by hand'),
      );
    }
    await files?.close();
    await session.close();
  }
}
