import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { ResolvedAdapterConfig } from '@holdfast/kernel';

/** Tables per counting query: SQLite allows at most 500 terms in one compound SELECT. */
const TABLES_PER_QUERY = 200;

/** The `sqlite3` CLI the SQLite source uses (its `binDirectory`, else PATH). */
function cliOf(config: ResolvedAdapterConfig): string {
  const bin = config.config.binDirectory as string | undefined;
  return bin ? join(bin, 'sqlite3') : 'sqlite3';
}

/** Runs one statement read-only on `file` and parses the CLI's JSON rows (no rows: no output at all). */
function query<T>(config: ResolvedAdapterConfig, file: string, sql: string, signal?: AbortSignal): Promise<T[]> {
  const busyMs = Number(config.config.busyTimeoutSeconds ?? 30) * 1000;
  return new Promise((resolve, reject) => {
    execFile(cliOf(config), ['-readonly', '-json', '-cmd', `.timeout ${busyMs}`, file, sql], { signal, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`sqlite3 on ${file}: ${(stderr || error.message).trim()}`));
      try {
        resolve(stdout.trim() ? (JSON.parse(stdout) as T[]) : []);
      } catch (parseError) {
        reject(new Error(`sqlite3 on ${file}: unreadable output (${(parseError as Error).message})`));
      }
    });
  });
}

const identifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * Exact row count of every table of a SQLite database file, read through the `sqlite3` CLI opened read-only (a
 * live database keeps its writers; a busy one is waited for up to the source's busy timeout). SQLite's own tables
 * (`sqlite_*`) and virtual tables are left out: counting a virtual table needs its module, and the real tables
 * behind one (FTS shadow tables) are counted anyway.
 */
export async function sqliteTableRowCounts(config: ResolvedAdapterConfig, file: string, signal?: AbortSignal): Promise<Record<string, number>> {
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

/** `PRAGMA integrity_check` of a database file: `ok`, or its first findings (or why it could not run). */
export async function sqliteIntegrityCheck(config: ResolvedAdapterConfig, file: string, signal?: AbortSignal): Promise<string> {
  try {
    const rows = await query<{ integrity_check: string }>(config, file, 'PRAGMA integrity_check(5)', signal);
    return rows.map((row) => row.integrity_check).join('; ') || 'no answer';
  } catch (error) {
    return (error as Error).message;
  }
}
