import { execFile } from 'node:child_process';
import { AdapterError, type ScratchDatabaseFile } from '@holdfast/sdk';
import type { SqliteSourceConfig } from '../config.js';
import { cliPath, ORIGIN } from './sqlite-cli.js';

/** Tables per counting query: SQLite allows at most 500 terms in one compound SELECT. */
const TABLES_PER_QUERY = 200;

const identifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * Runs one statement on `file` through the sqlite3 CLI opened read-only (a live database keeps its writers; a busy
 * one is waited for up to the busy timeout) and parses its JSON rows (no rows: no output at all).
 */
function query<T>(config: SqliteSourceConfig, file: string, sql: string, signal?: AbortSignal): Promise<T[]> {
  const args = ['-readonly', '-json', '-cmd', `.timeout ${config.busyTimeoutSeconds * 1000}`, file, sql];
  return new Promise((resolve, reject) => {
    execFile(cliPath(config), args, { signal, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new AdapterError(ORIGIN, 'TRANSIENT', `sqlite3 on ${file}: ${(stderr || error.message).trim()}`, { cause: error }));
      try {
        resolve(stdout.trim() ? (JSON.parse(stdout) as T[]) : []);
      } catch (parseError) {
        reject(new AdapterError(ORIGIN, 'TRANSIENT', `sqlite3 on ${file}: unreadable output (${(parseError as Error).message})`));
      }
    });
  });
}

/**
 * Exact row count of every table of a database file. SQLite's own tables (`sqlite_*`) and virtual tables are left
 * out: counting a virtual table needs its module, and the real tables behind one (FTS shadow tables) are counted.
 */
async function tableRowCounts(config: SqliteSourceConfig, file: string, signal?: AbortSignal): Promise<Record<string, number>> {
  const tables = await query<{ name: string }>(
    config,
    file,
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL%' ORDER BY name",
    signal,
  );
  const counts: Record<string, number> = {};
  for (let start = 0; start < tables.length; start += TABLES_PER_QUERY) {
    const batch = tables.slice(start, start + TABLES_PER_QUERY);
    const sql = batch.map(({ name }) => `SELECT ${literal(name)} AS name, count(*) AS count FROM ${identifier(name)}`).join(' UNION ALL ');
    for (const row of await query<{ name: string; count: number }>(config, file, sql, signal)) counts[row.name] = Number(row.count);
  }
  return counts;
}

/**
 * Scratch database files for test restores: the engine restores into a file in a throwaway folder on this host and
 * reads it here with the configured CLI. Over SSH the file would be on the other host, so such a configuration
 * cannot take part.
 */
export function sqliteScratch(config: SqliteSourceConfig): ScratchDatabaseFile {
  if (config.ssh) {
    throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'test restores of files reached over SSH are not supported yet (the scratch file and the checks run on the Holdfast host)');
  }
  return {
    placement: 'file',
    counts: 'table-rows',
    figures: (file, signal) => tableRowCounts(config, file, signal),
    // `ok`, or the first findings (or why the check could not run): the restore refused a failing file already,
    // and this checks what actually sits in the scratch.
    integrityCheck: async (file, signal) => {
      try {
        const rows = await query<{ integrity_check: string }>(config, file, 'PRAGMA integrity_check(5)', signal);
        return rows.map((row) => row.integrity_check).join('; ') || 'no answer';
      } catch (error) {
        return (error as Error).message;
      }
    },
  };
}
