// What the server says about its binary log, over an ordinary driver connection.
import type mysql from 'mysql2/promise';
import { AdapterError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN, parseVersion, scrub, withConnection } from '../connection.js';

/** The settings point-in-time recovery depends on. */
export interface BinlogSettings {
  logBin: boolean;
  binlogFormat: string;
  /** Absent on servers before row images existed. */
  binlogRowImage?: string;
  serverId: number;
  maxBinlogSize: number;
  version: string;
  edition: string;
  /** The account the server matched (`CURRENT_USER()`, `user@host`), for GRANT statements in messages. */
  account: string;
}

/** One row of `SHOW BINARY LOGS`: the files the server still has, oldest first; the last is being written. */
export interface ServerBinlog {
  name: string;
  size: number;
}

/** `SHOW BINARY LOGS` refused: binary logging off (1381) or the account lacks REPLICATION CLIENT (1227). */
export type BinlogListing = { ok: true; logs: ServerBinlog[] } | { ok: false; errno?: number; message: string };

export async function readBinlogSettings(connection: mysql.Connection): Promise<BinlogSettings> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>(
    'SELECT @@log_bin AS log_bin, @@binlog_format AS binlog_format, @@server_id AS server_id, @@max_binlog_size AS max_binlog_size, VERSION() AS version, @@version_comment AS comment, CURRENT_USER() AS account',
  );
  const row = rows[0]!;
  const { version, edition } = parseVersion(String(row.version), String(row.comment ?? ''));
  // binlog_row_image is read apart: a server without it answers an error, not NULL.
  const [image] = await connection.query<mysql.RowDataPacket[]>("SHOW GLOBAL VARIABLES LIKE 'binlog_row_image'");
  const rowImage = image[0] ? String(image[0].Value ?? image[0].value) : undefined;
  return {
    logBin: Number(row.log_bin) === 1,
    binlogFormat: String(row.binlog_format),
    ...(rowImage ? { binlogRowImage: rowImage } : {}),
    serverId: Number(row.server_id),
    maxBinlogSize: Number(row.max_binlog_size),
    version,
    edition,
    account: String(row.account),
  };
}

/** `SHOW BINARY LOGS` on an open connection, refusals answered rather than thrown. */
export async function listBinaryLogs(connection: mysql.Connection): Promise<BinlogListing> {
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW BINARY LOGS');
    return { ok: true, logs: rows.map((row) => ({ name: String(row.Log_name), size: Number(row.File_size) })) };
  } catch (error) {
    const { errno, message } = error as { errno?: number; message?: string };
    return { ok: false, ...(errno === undefined ? {} : { errno }), message: message ?? String(error) };
  }
}

/** The server's binary logs, for the stream: a refusal is an error (the check names what is missing). */
export async function serverBinlogs(config: MysqlSourceConfig): Promise<ServerBinlog[]> {
  return withConnection(config, async (connection) => {
    const listing = await listBinaryLogs(connection);
    if (listing.ok) return listing.logs;
    const code = listing.errno === 1227 ? 'AUTH' : listing.errno === 1381 ? 'CONFIG' : 'TRANSIENT';
    throw new AdapterError(ORIGIN, code, `SHOW BINARY LOGS failed on ${config.host}:${config.port}: ${scrub(listing.message, config)}`);
  });
}
