import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs SQL through psql on the local PostgreSQL (trust auth for root) and returns trimmed output. */
export async function psql(database: string, sql: string): Promise<string> {
  const { stdout } = await run('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atc', sql]);
  return stdout.trim();
}

/** A throwaway database name (not created). */
export function databaseName(label: string): string {
  return `hf_e2e_${label}_${randomBytes(4).toString('hex')}`;
}

/** Creates a database with `rows` rows in one table and a few in another. */
export async function seedDatabase(name: string, rows: number): Promise<void> {
  await psql('postgres', `CREATE DATABASE "${name}"`);
  await psql(name, `CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(10,2), note text)`);
  await psql(name, `INSERT INTO orders SELECT g, 'customer ' || (g % 977) || ' Zoë', (g * 13 % 100000) / 100.0, md5(g::text) FROM generate_series(1, ${rows}) g`);
  await psql(name, `CREATE TABLE settings (key text PRIMARY KEY, value jsonb)`);
  await psql(name, `INSERT INTO settings VALUES ('theme', '{"dark": true}'), ('locale', '"de-DE"')`);
}

/** Row count and an order-independent content digest per table: what a restore must reproduce. */
export async function tableDigests(name: string): Promise<Record<string, string>> {
  const tables = (await psql(name, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).split('\n').filter(Boolean);
  const digests: Record<string, string> = {};
  for (const table of tables) {
    digests[table] = await psql(name, `SELECT count(*) || ':' || coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '') FROM "${table}" t`);
  }
  return digests;
}

export async function dropDatabase(name: string): Promise<void> {
  await psql('postgres', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
