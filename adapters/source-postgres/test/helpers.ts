import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The local PostgreSQL of the test machine (trust auth). */
export const server = { host: '127.0.0.1', port: 5432, user: 'root' };

/** Runs SQL on a database of the local server. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(database: string, text: string, values?: unknown[]): Promise<T[]> {
  const client = new pg.Client({ ...server, database });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Creates a throwaway database and returns its name. */
export async function createDatabase(label: string): Promise<string> {
  const name = `hf_pgsrc_${label}_${randomBytes(4).toString('hex')}`;
  await sql('postgres', `CREATE DATABASE "${name}"`);
  return name;
}

/** Drops a database, disconnecting its sessions first. */
export async function dropDatabase(name: string): Promise<void> {
  await sql('postgres', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** Seeds two tables (with unicode text and bytea) and returns their content checksums. */
export async function seed(database: string, rows: number): Promise<Record<string, string>> {
  await sql(database, `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, payload bytea, created timestamptz DEFAULT now())`);
  await sql(database, `INSERT INTO items (id, name, payload) SELECT g, 'item ' || g || ' naïve 東京', sha256(g::text::bytea) FROM generate_series(1, $1) g`, [rows]);
  await sql(database, `CREATE TABLE notes (id serial PRIMARY KEY, body text)`);
  await sql(database, `INSERT INTO notes (body) VALUES ('first'), ('second with ''quotes'''), (NULL)`);
  return checksums(database);
}

/** Row count and an order-independent content checksum of every user table. */
export async function checksums(database: string): Promise<Record<string, string>> {
  const tables = await sql<{ table_name: string }>(
    database,
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  const result: Record<string, string> = {};
  for (const { table_name } of tables) {
    const [row] = await sql<{ n: string; digest: string }>(
      database,
      `SELECT count(*)::text AS n, coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '') AS digest FROM "${table_name}" t`,
    );
    result[table_name] = `${row!.n}:${row!.digest}`;
  }
  return result;
}

/** Child processes of this process, by reading /proc. */
export async function childCommands(): Promise<string[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) found.push((await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0')[0]!);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
