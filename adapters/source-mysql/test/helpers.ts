import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';

/** The local MariaDB, as the launcher recorded it (root, empty password). */
const state = JSON.parse(readFileSync('/tmp/holdfast-test-services/mariadb/mariadb.json', 'utf8')) as { host: string; port: number; user: string };
export const server = { host: state.host, port: state.port, user: state.user };

/** Runs SQL as root (optionally in a database) and returns the rows. */
export async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = [], database?: string): Promise<T[]> {
  const connection = await mysql.createConnection({ ...server, database, multipleStatements: false });
  try {
    const [rows] = await connection.query(text, values);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

/** A fresh, unique name with a label. */
export function uniqueName(label: string): string {
  return `hf_mysrc_${label}_${randomBytes(4).toString('hex')}`;
}

/** Creates a throwaway database and returns its name. */
export async function createDatabase(label: string): Promise<string> {
  const name = uniqueName(label);
  await sql(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  return name;
}

/** Drops databases (missing ones are fine). */
export async function dropDatabases(...names: (string | undefined)[]): Promise<void> {
  for (const name of names) if (name) await sql(`DROP DATABASE IF EXISTS \`${name}\``);
}

/**
 * Seeds a table (unicode text, binary blobs, NULLs), a trigger, a procedure, a function and an event. `rows` of
 * about 300 bytes each; 4000 rows make a dump of more than 1 MiB.
 */
export async function seed(database: string, rows: number): Promise<void> {
  await sql(
    'CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(200) NOT NULL, payload BLOB, note TEXT NULL, changed_name VARCHAR(200) NULL) ENGINE=InnoDB',
    [],
    database,
  );
  await sql('CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, item_id INT, at_name VARCHAR(200))', [], database);
  await sql('CREATE TRIGGER items_audit AFTER INSERT ON items FOR EACH ROW INSERT INTO audit (item_id, at_name) VALUES (NEW.id, NEW.name)', [], database);
  await sql("CREATE PROCEDURE rename_item(IN which INT, IN label VARCHAR(200)) UPDATE items SET changed_name = CONCAT(label, ' ✓') WHERE id = which", [], database);
  await sql('CREATE FUNCTION item_count() RETURNS INT READS SQL DATA RETURN (SELECT COUNT(*) FROM items)', [], database);
  await sql("CREATE EVENT purge_audit ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 00:00:00' DISABLE DO DELETE FROM audit WHERE id < 0", [], database);
  for (let start = 1; start <= rows; start += 500) {
    const batch = Array.from({ length: Math.min(500, rows - start + 1) }, (_, i) => start + i);
    const values = batch.map((id) => [
      id,
      `item ${id} naïve 東京 'quoted' \\ back`,
      Buffer.concat([randomBytes(200), Buffer.from([0, 10, 13, 39, 92])]),
      id % 7 === 0 ? null : `line one\nline two ${id}`,
    ]);
    await sql('INSERT INTO items (id, name, payload, note) VALUES ?', [values], database);
  }
  await sql('CALL rename_item(?, ?)', [1, 'renamed'], database);
}

/** Every row of every table, ordered by primary key, blobs as hex: compared row by row after a restore. */
export async function tableRows(database: string): Promise<Record<string, unknown[]>> {
  const tables = await sql<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name",
    [database],
  );
  const result: Record<string, unknown[]> = {};
  for (const { name } of tables) {
    const rows = await sql<Record<string, unknown>>(`SELECT * FROM \`${name}\` ORDER BY id`, [], database);
    result[name] = rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('hex') : v])));
  }
  return result;
}

/** `SHOW CREATE` text of every table, trigger, routine and event (timestamps left out). */
export async function definitions(database: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const pick = (rows: Record<string, unknown>[], column: string) => String(rows[0]?.[column]);
  for (const { name } of await sql<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ?', [database])) {
    result[`table ${name}`] = pick(await sql(`SHOW CREATE TABLE \`${name}\``, [], database), 'Create Table');
  }
  for (const { name } of await sql<{ name: string }>('SELECT trigger_name AS name FROM information_schema.triggers WHERE trigger_schema = ?', [database])) {
    result[`trigger ${name}`] = pick(await sql(`SHOW CREATE TRIGGER \`${name}\``, [], database), 'SQL Original Statement');
  }
  for (const { name, type } of await sql<{ name: string; type: string }>(
    'SELECT routine_name AS name, routine_type AS type FROM information_schema.routines WHERE routine_schema = ?',
    [database],
  )) {
    const column = type === 'PROCEDURE' ? 'Create Procedure' : 'Create Function';
    result[`${type.toLowerCase()} ${name}`] = pick(await sql(`SHOW CREATE ${type} \`${name}\``, [], database), column);
  }
  for (const { name } of await sql<{ name: string }>('SELECT event_name AS name FROM information_schema.events WHERE event_schema = ?', [database])) {
    result[`event ${name}`] = pick(await sql(`SHOW CREATE EVENT \`${name}\``, [], database), 'Create Event');
  }
  return result;
}
