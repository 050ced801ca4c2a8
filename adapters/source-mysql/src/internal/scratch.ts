import type { RowDataPacket } from 'mysql2/promise';
import { AdapterError, type ScratchDatabaseServer } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN, quoteIdentifier, withConnection } from './connection.js';

/**
 * Throwaway databases for test restores on the server this configuration reaches directly. Over SSH the client runs
 * remotely and Holdfast has no connection of its own to count rows with, so such a configuration cannot take part.
 */
export function mysqlScratch(config: MysqlSourceConfig): ScratchDatabaseServer {
  if (config.ssh) {
    throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'test restores need a direct connection to the server; this configuration reaches it over SSH');
  }
  return {
    placement: 'database',
    counts: 'table-rows',
    server: `${config.host}:${config.port}`,
    // Table name -> exact row count of every base table (views are left out).
    figures: (database) =>
      withConnection(config, async (connection) => {
        const [tables] = await connection.query<RowDataPacket[]>(
          "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
          [database],
        );
        const counts: Record<string, number> = {};
        for (const { name } of tables as Array<{ name: string }>) {
          const [rows] = await connection.query<RowDataPacket[]>(`SELECT COUNT(*) AS count FROM ${quoteIdentifier(database)}.${quoteIdentifier(name)}`);
          counts[name] = Number((rows[0] as { count: number | string }).count);
        }
        return counts;
      }),
    // The client already stops on a broken dump; CHECK TABLE on every table would cost more than the restore.
    integrityCheck: () => Promise.resolve(null),
    listDatabases: (prefix) =>
      withConnection(config, async (connection) => {
        const [rows] = await connection.query<RowDataPacket[]>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE LEFT(SCHEMA_NAME, ?) = ?', [prefix.length, prefix]);
        return (rows as Array<{ name: string }>).map((row) => row.name);
      }),
    databaseExists: (database) =>
      withConnection(config, async (connection) => {
        const [rows] = await connection.query<RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database]);
        return rows.length > 0;
      }),
    dropDatabase: async (database) => {
      await withConnection(config, (connection) => connection.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)}`));
    },
  };
}
