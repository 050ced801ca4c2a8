import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs SQL through the sqlite3 CLI and returns the rows (JSON mode). */
export function query<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync('sqlite3', ['-json', '-bail', file, '.timeout 10000', sql], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  return out.trim() ? (JSON.parse(out) as T[]) : [];
}

/** A fresh temp directory. */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `hf-sqlite-${label}-`));
}

/** Removes directories. */
export async function removeAll(...dirs: (string | undefined)[]): Promise<void> {
  for (const dir of dirs) if (dir) await rm(dir, { recursive: true, force: true });
}

/** Creates a database with a table (text, blobs, NULLs), an index, a view and a trigger; ~330 bytes per row. */
export function createDatabase(file: string, rows: number, journalMode: 'wal' | 'delete' = 'wal'): void {
  execFileSync('sqlite3', [
    '-bail',
    file,
    `PRAGMA journal_mode=${journalMode};`,
    `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, payload BLOB, note TEXT);
     CREATE INDEX items_name ON items(name);
     CREATE TABLE log (id INTEGER PRIMARY KEY, item INTEGER);
     CREATE VIEW named AS SELECT id, name FROM items WHERE note IS NOT NULL;
     CREATE TRIGGER items_log AFTER INSERT ON items BEGIN INSERT INTO log (item) VALUES (NEW.id); END;
     WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows})
     INSERT INTO items (name, payload, note) SELECT 'item ' || x || ' naïve 東京', randomblob(300), CASE WHEN x % 7 = 0 THEN NULL ELSE 'n' || x END FROM c;`,
  ]);
}

/** Schema and every row (blobs as hex), ordered: compared row by row after a restore. */
export function contents(file: string, whereItems = ''): { schema: unknown[]; items: unknown[]; log: unknown[] } {
  return {
    schema: query(file, 'SELECT type, name, sql FROM sqlite_schema ORDER BY name'),
    items: query(file, `SELECT id, name, hex(payload) AS payload, note FROM items ${whereItems} ORDER BY id`),
    log: query(file, `SELECT id, item FROM log ${whereItems.replace('id', 'item')} ORDER BY id`),
  };
}

/** Another process (a long-running sqlite3 CLI) that inserts a row every few milliseconds until stopped. */
export function startWriter(file: string): { process: ChildProcess; stop: () => Promise<void> } {
  const writer = spawn('sqlite3', [file], { stdio: ['pipe', 'ignore', 'ignore'] });
  writer.stdin.write('.timeout 20000\n');
  const timer = setInterval(() => {
    writer.stdin.write("INSERT INTO items (name, payload, note) VALUES ('written during the backup', randomblob(300), 'w');\n");
  }, 2);
  return {
    process: writer,
    stop: async () => {
      clearInterval(timer);
      if (writer.exitCode !== null || writer.signalCode !== null) return;
      writer.stdin.end('.quit\n');
      await new Promise((resolve) => writer.once('close', resolve));
    },
  };
}
