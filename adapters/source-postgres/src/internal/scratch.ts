import { AdapterError, type ScratchDatabaseServer } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, quoteIdentifier, withClient } from './connection.js';

/** Schemas a test restore never counts (the server's own, TOAST and temporary ones). */
const USER_TABLES = `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
  ORDER BY 1, 2`;

/**
 * Throwaway databases for test restores on the server this configuration reaches directly. Over SSH the tools run
 * remotely and Holdfast has no connection of its own to count rows with, so such a configuration cannot take part.
 */
export function postgresScratch(config: PostgresSourceConfig): ScratchDatabaseServer {
  if (config.ssh) {
    throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'test restores need a direct connection to the server; this configuration reaches it over SSH');
  }
  const maintenance = config.maintenanceDatabase;
  return {
    placement: 'database',
    counts: 'table-rows',
    server: `${config.host}:${config.port}`,
    // `schema.table` -> exact row count of every user table.
    figures: (database) =>
      withClient(config, database, async (client) => {
        const counts: Record<string, number> = {};
        for (const { schema, name } of (await client.query<{ schema: string; name: string }>(USER_TABLES)).rows) {
          const result = await client.query<{ count: string }>(`SELECT count(*) AS count FROM ${quoteIdentifier(schema)}.${quoteIdentifier(name)}`);
          counts[`${schema}.${name}`] = Number(result.rows[0]?.count ?? 0);
        }
        return counts;
      }),
    // pg_restore already stops on a broken dump; PostgreSQL has no cheap whole-database check beyond that.
    integrityCheck: () => Promise.resolve(null),
    listDatabases: (prefix) =>
      withClient(config, maintenance, async (client) => (await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix])).rows.map((row) => row.datname)),
    databaseExists: (database) =>
      withClient(config, maintenance, async (client) => ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount ?? 0) > 0),
    // WITH (FORCE) (PostgreSQL 13+) ends sessions still connected to the scratch database.
    dropDatabase: (database) =>
      withClient(config, maintenance, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)} WITH (FORCE)`);
      }),
  };
}
