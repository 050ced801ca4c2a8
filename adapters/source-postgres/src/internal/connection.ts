import type pg from 'pg';
import { AdapterError, maskSecrets } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';

/** How errors name this adapter. */
export const ORIGIN = { kind: 'source', id: 'postgres' } as const;

/** Environment for pg_dump/pg_restore: the password travels in PGPASSWORD, never on the command line. */
export function toolEnvironment(config: PostgresSourceConfig): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    PGSSLMODE: config.sslMode,
    PGCONNECT_TIMEOUT: String(config.connectTimeoutSeconds),
    PGAPPNAME: 'holdfast',
  };
  if (config.password) env.PGPASSWORD = config.password;
  return env;
}

/** Connection arguments shared by the tools. */
export function connectionArgs(config: PostgresSourceConfig, database: string): string[] {
  return ['--host', config.host, '--port', String(config.port), '--username', config.user, '--no-password', '--dbname', database];
}

/** Maps a client or tool failure to a coded error whose message holds no secret. */
export function connectionError(error: unknown, config: PostgresSourceConfig): AdapterError {
  const raw = error instanceof Error ? error.message : String(error);
  const message = scrub(raw, config);
  const code = /password authentication|no pg_hba|role .* does not exist|permission denied/i.test(message)
    ? 'AUTH'
    : /does not exist/i.test(message)
      ? 'NOT_FOUND'
      : 'TRANSIENT';
  return new AdapterError(ORIGIN, code, `cannot connect to ${config.host}:${config.port} as ${config.user}: ${message}`, {
    cause: error,
  });
}

/** Removes the password from any text that might echo it, keeping the text's words (the shared masking rule). */
export function scrub(text: string, config: PostgresSourceConfig): string {
  return maskSecrets(text, [config.password]);
}

/** Runs `work` with a connected client on `database`, closing it afterwards. */
export async function withClient<T>(
  config: PostgresSourceConfig,
  database: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  // The driver is loaded by the first connection, so a server that never backs up this engine does not carry it.
  const { default: driver } = await import('pg');
  const client = new driver.Client({
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password ?? '',
    database,
    connectionTimeoutMillis: config.connectTimeoutSeconds * 1000,
    ssl: config.sslMode === 'disable' || config.sslMode === 'prefer' ? false : { rejectUnauthorized: config.sslMode === 'verify-full' },
    application_name: 'holdfast',
  });
  // An idle client that loses its connection emits 'error'; without a listener that would crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw connectionError(error, config);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Quotes an identifier for SQL. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
