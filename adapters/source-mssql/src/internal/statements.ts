import { quoteName, quoteString } from './quoting.js';

/**
 * Every statement the adapter sends, in one place, so the tests (and a DBA reading the README) see exactly what
 * runs on the server.
 */

/** Version and edition, e.g. `16.0.4135.4` / `Developer Edition (64-bit)`. */
export const VERSION_QUERY =
  "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS version, CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition;";

/** User databases: sys.databases minus master, tempdb, model and msdb. */
export const DATABASES_QUERY =
  "SELECT name, state_desc FROM sys.databases WHERE name NOT IN (N'master', N'tempdb', N'model', N'msdb') ORDER BY name;";

/** Where the instance puts new data and log files (the default MOVE targets of a restore). */
export const DEFAULT_PATHS_QUERY =
  "SELECT CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000)) AS dataPath, CAST(SERVERPROPERTY('InstanceDefaultLogPath') AS nvarchar(4000)) AS logPath;";

export interface BackupOptions {
  copyOnly: boolean;
  compression: boolean;
}

/** A full backup into a fresh file (FORMAT, INIT: one backup set, nothing appended), with page checksums. */
export function backupStatement(database: string, file: string, options: BackupOptions): string {
  const withOptions = [
    ...(options.copyOnly ? ['COPY_ONLY'] : []),
    'FORMAT',
    'INIT',
    'CHECKSUM',
    ...(options.compression ? ['COMPRESSION'] : []),
    `NAME = ${quoteString(`Holdfast backup of ${database}`)}`,
  ];
  return `BACKUP DATABASE ${quoteName(database)} TO DISK = ${quoteString(file)} WITH ${withOptions.join(', ')};`;
}

export function headerOnlyStatement(file: string): string {
  return `RESTORE HEADERONLY FROM DISK = ${quoteString(file)};`;
}

export function fileListOnlyStatement(file: string): string {
  return `RESTORE FILELISTONLY FROM DISK = ${quoteString(file)};`;
}

/** Ends other sessions in a database about to be replaced (RESTORE needs it exclusively). */
export function singleUserStatement(database: string): string {
  return `ALTER DATABASE ${quoteName(database)} SET SINGLE_USER WITH ROLLBACK IMMEDIATE;`;
}

/** Gives a database back to everyone after a failed replace left it single-user. */
export function multiUserStatement(database: string): string {
  return `ALTER DATABASE ${quoteName(database)} SET MULTI_USER;`;
}

export interface FileMove {
  logicalName: string;
  physicalName: string;
}

/** The restore itself: each logical file moved to its new physical path, REPLACE only when asked for. */
export function restoreStatement(database: string, file: string, moves: FileMove[], replace: boolean): string {
  const withOptions = [
    ...moves.map((move) => `MOVE ${quoteString(move.logicalName)} TO ${quoteString(move.physicalName)}`),
    ...(replace ? ['REPLACE'] : []),
    'RECOVERY',
  ];
  return `RESTORE DATABASE ${quoteName(database)} FROM DISK = ${quoteString(file)} WITH ${withOptions.join(', ')};`;
}
