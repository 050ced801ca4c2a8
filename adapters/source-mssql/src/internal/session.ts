import type { ConnectionPool } from 'mssql';
import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';
import type { MssqlSourceConfig } from '../config.js';
import { ORIGIN } from './origin.js';

/** Server error numbers that say "no such database" (911: cannot use/locate, 3701: cannot drop, 15010: not exist). */
const UNKNOWN_DATABASE = new Set([911, 3701, 15010]);
/** Server error numbers about permissions (262: permission denied in database, 229/230: object permission, 3110). */
const NO_PERMISSION = new Set([229, 230, 262, 3110, 15247]);
/** 3201: cannot open backup device (directory missing or not writable by the service account). */
const BACKUP_DEVICE = 3201;

type ServerError = Error & { number?: number; code?: string; precedingErrors?: ServerError[]; originalError?: ServerError };

/**
 * One TDS connection to the instance (the `master` database: BACKUP and RESTORE run from there, and a missing
 * database then fails on our own check with a clear message instead of at login). Statements are sent as SQL
 * batches, never through sp_executesql: BACKUP and RESTORE take their names as literals.
 */
export class MssqlSession {
  private constructor(
    private readonly pool: ConnectionPool,
    private readonly where: string,
  ) {}

  /** Connects and logs in; a wrong password is AUTH, an unreachable host TRANSIENT, both naming the cause. */
  static async open(config: MssqlSourceConfig, signal?: AbortSignal): Promise<MssqlSession> {
    const where = `${config.host}:${config.port}`;
    // The driver (mssql with tedious, about 20 MiB in memory) is loaded by the first connection, so a server that never
    // backs up SQL Server does not carry it.
    const { default: sql } = await import('mssql');
    const pool = new sql.ConnectionPool({
      server: config.host,
      port: config.port,
      user: config.user,
      password: config.password ?? '',
      database: 'master',
      connectionTimeout: config.connectTimeoutSeconds * 1000,
      requestTimeout: config.commandTimeoutSeconds * 1000,
      validateConnection: false,
      pool: { max: 1, min: 0 },
      options: { encrypt: config.encrypt, trustServerCertificate: config.trustServerCertificate, appName: 'holdfast' },
    });
    if (signal?.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'aborted before connecting to SQL Server');
    try {
      await pool.connect();
    } catch (error) {
      await pool.close().catch(() => undefined);
      throw connectError(error as ServerError, where, config.user);
    }
    return new MssqlSession(pool, where);
  }

  /** Runs one batch and answers the rows of its first result set; an abort cancels it (a TDS ATTENTION). */
  async query<T = Record<string, unknown>>(batch: string, signal?: AbortSignal, what = 'the statement'): Promise<T[]> {
    if (signal?.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
    const request = this.pool.request();
    const onAbort = () => request.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await request.batch<T>(batch);
      return result.recordset ?? [];
    } catch (error) {
      if (signal?.aborted || (error as ServerError).code === 'ECANCEL') throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
      throw requestError(error as ServerError, this.where, what);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

function connectError(error: ServerError, where: string, user: string): AdapterError {
  const inner = error.originalError ?? error;
  const detail = inner.message || error.message;
  if (error.code === 'ELOGIN') return new AdapterError(ORIGIN, 'AUTH', `login to SQL Server at ${where} as "${user}" failed: ${detail}`, { cause: error });
  if (error.code === 'EENCRYPT' || /certificate|self[- ]signed|TLS|SSL/i.test(detail)) {
    return new AdapterError(ORIGIN, 'CONFIG', `TLS towards SQL Server at ${where} failed (see encrypt/trustServerCertificate): ${detail}`, { cause: error });
  }
  const codes = systemCodes(error);
  const because = codes.length > 0 && !codes.some((code) => detail.includes(code)) ? ` (${codes.join(', ')})` : '';
  return new AdapterError(ORIGIN, 'TRANSIENT', `cannot reach SQL Server at ${where}: ${detail}${because}`, { cause: error });
}

/**
 * The socket error codes (ECONNREFUSED, ENOTFOUND, ETIMEDOUT...) buried in tedious's error chain: it wraps them in
 * an AggregateError ("Could not connect (sequence)") that does not name them.
 */
function systemCodes(error: unknown, seen = new Set<unknown>()): string[] {
  if (!error || typeof error !== 'object' || seen.has(error)) return [];
  seen.add(error);
  const item = error as { code?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
  const own = typeof item.code === 'string' && /^E[A-Z]+$/.test(item.code) && !['ESOCKET', 'ELOGIN', 'ETIMEOUT'].includes(item.code) ? [item.code] : [];
  const nested = [item.cause, item.originalError, ...(Array.isArray(item.errors) ? item.errors : [])].flatMap((inner) => systemCodes(inner, seen));
  return [...new Set([...own, ...nested])];
}

/** Every server message of a failed batch, in order (BACKUP reports the cause first, then "terminating abnormally"). */
function messagesOf(error: ServerError): ServerError[] {
  return [...(error.precedingErrors ?? []), error];
}

function requestError(error: ServerError, where: string, what: string): AdapterError {
  const all = messagesOf(error);
  const numbers = all.map((item) => item.number ?? item.originalError?.number);
  const text = all.map((item) => (item.number ? `${item.message} (error ${item.number})` : item.message)).join(' ');
  let code: AdapterErrorCode = 'CONFIG';
  if (numbers.some((number) => number !== undefined && UNKNOWN_DATABASE.has(number))) code = 'NOT_FOUND';
  else if (numbers.some((number) => number !== undefined && NO_PERMISSION.has(number))) code = 'AUTH';
  else if (error.code === 'ETIMEOUT' || error.code === 'ESOCKET' || error.code === 'ECONNCLOSED') code = 'TRANSIENT';
  const hint = numbers.includes(BACKUP_DEVICE) ? ' (does backupDirectory exist on the server and can the SQL Server service account write to it?)' : '';
  return new AdapterError(ORIGIN, code, `${what} failed on SQL Server at ${where}: ${text}${hint}`, { cause: error });
}
