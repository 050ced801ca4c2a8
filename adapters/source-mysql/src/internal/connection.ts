import type mysql from 'mysql2/promise';
import { AdapterError, maskSecrets } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';

/** How errors name this adapter. */
export const ORIGIN = { kind: 'source', id: 'mysql' } as const;

/** Schemas that belong to the server itself and are never dumped as user data. */
export const SYSTEM_SCHEMAS = ['information_schema', 'performance_schema', 'mysql', 'sys'] as const;

/** Removes the password from any text that might echo it, keeping the text's words (the shared masking rule). */
export function scrub(text: string, config: MysqlSourceConfig): string {
  return maskSecrets(text, [config.password]);
}

/** Maps a driver failure to a coded error whose message holds no secret. */
export function connectionError(error: unknown, config: MysqlSourceConfig): AdapterError {
  const raw = error instanceof Error ? error.message : String(error);
  const errno = (error as { errno?: number; code?: string }).errno;
  const code = errno === 1045 || errno === 1044 || errno === 1698 ? 'AUTH' : errno === 1049 ? 'NOT_FOUND' : 'TRANSIENT';
  const detail = scrub(raw || String((error as { code?: string }).code ?? 'unknown error'), config);
  return new AdapterError(ORIGIN, code, `cannot connect to ${config.host}:${config.port} as ${config.user}: ${detail}`, { cause: error });
}

function sslOption(config: MysqlSourceConfig): mysql.ConnectionOptions['ssl'] {
  // mysql2 has no opportunistic TLS, so `prefer` connects in the clear like `disable`.
  if (config.tls === 'require') return { rejectUnauthorized: false };
  if (config.tls === 'verify-full') return { rejectUnauthorized: true };
  return undefined;
}

/** Runs `work` on a fresh connection, closing it afterwards. */
export async function withConnection<T>(config: MysqlSourceConfig, work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  let connection: mysql.Connection;
  try {
    // The driver is loaded by the first connection, so a server that never backs up this engine does not carry it.
    const { default: driver } = await import('mysql2/promise');
    connection = await driver.createConnection({
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password ?? '',
      connectTimeout: config.connectTimeoutSeconds * 1000,
      ssl: sslOption(config),
      multipleStatements: false,
    });
  } catch (error) {
    throw connectionError(error, config);
  }
  // A connection that drops while idle emits 'error'; without a listener that would crash the process.
  connection.on('error', () => undefined);
  try {
    return await work(connection);
  } finally {
    await connection.end().catch(() => connection.destroy());
  }
}

/** Quotes an identifier for SQL. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/** Server version and edition: `VERSION()` says MariaDB for MariaDB servers; anything else is MySQL. */
export function parseVersion(raw: string, comment: string): { version: string; edition: string } {
  const version = /^\d+\.\d+\.\d+/.exec(raw)?.[0] ?? raw;
  const edition = /mariadb/i.test(raw) || /mariadb/i.test(comment) ? 'MariaDB' : 'MySQL';
  return { version, edition };
}

/** Names of the user databases, system schemas left out. */
export async function userDatabases(connection: mysql.Connection): Promise<string[]> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW DATABASES');
  return rows
    .map((row) => String(Object.values(row)[0]))
    .filter((name) => !(SYSTEM_SCHEMAS as readonly string[]).includes(name.toLowerCase()) && !isRestoreWorkSchema(name))
    .sort();
}

/** A restore's staging or set-aside schema (or one a crash left): never a database to back up. */
export function isRestoreWorkSchema(name: string): boolean {
  return /__holdfast_(staging|old)_[0-9a-f]{8}$/.test(name);
}
