import type { ResolvedAdapterConfig } from '@holdfast/kernel';
import type mysql from 'mysql2/promise';
import type { ScratchDatabaseDriver } from './scratch-driver.js';

function connectionOptions(config: ResolvedAdapterConfig): mysql.ConnectionOptions {
  const settings = config.config as { host?: string; port?: number; user?: string; password?: string; tls?: string; connectTimeoutSeconds?: number };
  const primary = config.credentials.primary as { username?: string; password?: string } | undefined;
  return {
    host: settings.host ?? '127.0.0.1',
    port: Number(settings.port ?? 3306),
    user: settings.user ?? primary?.username,
    password: settings.password ?? primary?.password ?? '',
    connectTimeout: (settings.connectTimeoutSeconds ?? 10) * 1000,
    // As the source adapter: mysql2 has no opportunistic TLS, so `prefer` connects in the clear.
    ssl: settings.tls === 'require' ? { rejectUnauthorized: false } : settings.tls === 'verify-full' ? { rejectUnauthorized: true } : undefined,
    multipleStatements: false,
  };
}

async function withConnection<T>(config: ResolvedAdapterConfig, work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  // Loaded on first use: test restores are rare, and the driver would otherwise sit in every process's memory.
  const { default: driver } = await import('mysql2/promise');
  const connection = await driver.createConnection(connectionOptions(config));
  // An idle connection that drops emits 'error'; without a listener that would crash the process.
  connection.on('error', () => undefined);
  try {
    return await work(connection);
  } finally {
    await connection.end().catch(() => undefined);
  }
}

const quote = (name: string): string => `\`${name.replace(/`/g, '``')}\``;

/** Scratch databases on a MySQL/MariaDB server the engine reaches directly (no SSH). */
export const mysqlScratch: ScratchDatabaseDriver = {
  engine: 'MySQL/MariaDB',
  async tableRowCounts(config, database) {
    return withConnection(config, async (connection) => {
      const [tables] = await connection.query<mysql.RowDataPacket[]>(
        "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
        [database],
      );
      const counts: Record<string, number> = {};
      for (const { name } of tables as Array<{ name: string }>) {
        const [rows] = await connection.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS count FROM ${quote(database)}.${quote(name)}`);
        counts[name] = Number((rows[0] as { count: number | string }).count);
      }
      return counts;
    });
  },
  async databaseExists(config, database) {
    return withConnection(config, async (connection) => {
      const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database]);
      return rows.length > 0;
    });
  },
  async listDatabases(config, prefix) {
    return withConnection(config, async (connection) => {
      const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE LEFT(SCHEMA_NAME, ?) = ?', [prefix.length, prefix]);
      return (rows as Array<{ name: string }>).map((row) => row.name);
    });
  },
  async dropDatabase(config, database) {
    await withConnection(config, (connection) => connection.query(`DROP DATABASE IF EXISTS ${quote(database)}`));
  },
};
