import type { ResolvedAdapterConfig } from '@holdfast/kernel';
import type pg from 'pg';
import type { ScratchDatabaseDriver } from './scratch-driver.js';

/** Schemas a PostgreSQL test restore never counts. */
const SYSTEM_SCHEMAS = "('pg_catalog', 'information_schema')";

function clientConfig(config: ResolvedAdapterConfig, database: string): pg.ClientConfig {
  const settings = config.config as { host?: string; port?: number; user?: string; password?: string; sslMode?: string; connectTimeoutSeconds?: number };
  const primary = config.credentials.primary as { username?: string; password?: string } | undefined;
  return {
    host: settings.host ?? '127.0.0.1',
    port: Number(settings.port ?? 5432),
    user: settings.user ?? primary?.username,
    password: settings.password ?? primary?.password,
    database,
    ssl: settings.sslMode === 'require' || settings.sslMode === 'verify-full' ? { rejectUnauthorized: settings.sslMode === 'verify-full' } : false,
    connectionTimeoutMillis: (settings.connectTimeoutSeconds ?? 10) * 1000,
  };
}

async function withClient<T>(config: ResolvedAdapterConfig, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  // Loaded on first use: test restores are rare, and the driver would otherwise sit in every process's memory.
  const { default: driver } = await import('pg');
  const client = new driver.Client(clientConfig(config, database));
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `schema.table` -> exact row count of every user table of `database`. */
async function tableRowCounts(config: ResolvedAdapterConfig, database: string): Promise<Record<string, number>> {
  return withClient(config, database, async (client) => {
    const tables = await client.query<{ schema: string; name: string }>(
      `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ${SYSTEM_SCHEMAS} AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
       ORDER BY 1, 2`,
    );
    const counts: Record<string, number> = {};
    for (const { schema, name } of tables.rows) {
      const result = await client.query<{ count: string }>(`SELECT count(*) AS count FROM ${quoteIdentifier(schema)}.${quoteIdentifier(name)}`);
      counts[`${schema}.${name}`] = Number(result.rows[0]?.count ?? 0);
    }
    return counts;
  });
}

/** Whether `database` exists on the server. */
async function databaseExists(config: ResolvedAdapterConfig, database: string): Promise<boolean> {
  const maintenance = (config.config.maintenanceDatabase as string | undefined) ?? 'postgres';
  return withClient(config, maintenance, async (client) => ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount ?? 0) > 0);
}

/** Drops a scratch database, ending sessions still connected to it (`WITH (FORCE)`, PostgreSQL 13+). */
async function dropDatabase(config: ResolvedAdapterConfig, database: string): Promise<void> {
  const maintenance = (config.config.maintenanceDatabase as string | undefined) ?? 'postgres';
  await withClient(config, maintenance, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)} WITH (FORCE)`);
  });
}

async function listDatabases(config: ResolvedAdapterConfig, prefix: string): Promise<string[]> {
  const maintenance = (config.config.maintenanceDatabase as string | undefined) ?? 'postgres';
  return withClient(config, maintenance, async (client) => (await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix])).rows.map((row) => row.datname));
}

/** Scratch databases on a PostgreSQL server the engine reaches directly (no SSH). */
export const postgresScratch: ScratchDatabaseDriver = { engine: 'PostgreSQL', tableRowCounts, databaseExists, dropDatabase, listDatabases };
