// A physical replication connection (the kind pg_basebackup and pg_receivewal open) for the few replication commands
// Holdfast sends itself: IDENTIFY_SYSTEM, SHOW, CREATE_REPLICATION_SLOT and DROP_REPLICATION_SLOT. A refused
// connection is explained with the replication check's sentences (missing privilege, missing pg_hba.conf line).
import type pg from 'pg';
import { AdapterError } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN, connectionError, scrub } from '../connection.js';
import { checkReplication } from '../replication-check.js';
import { DEFAULT_WAL_SEGMENT_SIZE, parseSizeSetting } from './wal-names.js';
import { replicationClientOptions } from '../replication-options.js';

/** Runs `work` on a replication connection; a refused connection becomes an AdapterError saying what is missing. */
export async function withReplicationClient<T>(config: PostgresSourceConfig, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const { default: driver } = await import('pg');
  const options = replicationClientOptions(config);
  const client = new driver.Client(options);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw await replicationRefusal(config, error);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Why a replication connection (or a tool opening one) was refused, as an AdapterError: the replication check's
 * sentences when it finds the cause (no REPLICATION privilege, no pg_hba.conf replication line, wal_level), the
 * ordinary connection error for a wrong password or an unreachable server, else the server's own words.
 */
export async function replicationRefusal(config: PostgresSourceConfig, error: unknown): Promise<AdapterError> {
  const message = scrub(error instanceof Error ? error.message : String(error), config);
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|timeout|Connection refused|could not connect/i.test(message)) return connectionError(error, config);
  try {
    const check = await checkReplication(config);
    if (check.problems.length > 0) {
      return new AdapterError(ORIGIN, 'AUTH', `${config.host}:${config.port} refused a replication connection as "${config.user}": ${check.problems.join(' ')}`, { cause: error });
    }
  } catch (checkError) {
    // The ordinary connection failed too (wrong password, server gone): that error says it best.
    if (checkError instanceof AdapterError) return checkError;
  }
  return new AdapterError(ORIGIN, 'AUTH', `${config.host}:${config.port} refused a replication connection as "${config.user}": ${message}`, { cause: error });
}

/** What a base backup records about the server, read over a replication connection before it starts. */
export interface ServerIdentity {
  systemId: string;
  timeline: number;
  serverVersion: string;
  /** Bytes per WAL segment (`wal_segment_size`). */
  walSegmentSize: number;
}

/** IDENTIFY_SYSTEM plus the server version and WAL segment size (a walsender answers SHOW). */
export async function identifyServer(config: PostgresSourceConfig): Promise<ServerIdentity> {
  return withReplicationClient(config, async (client) => {
    // A walsender speaks only the simple query protocol, which a query without parameters uses.
    const identity = (await client.query<{ systemid: string; timeline: string }>('IDENTIFY_SYSTEM')).rows[0]!;
    const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!;
    const segmentSize = (await client.query<{ wal_segment_size: string }>('SHOW wal_segment_size')).rows[0]?.wal_segment_size;
    return {
      systemId: String(identity.systemid),
      timeline: Number(identity.timeline),
      serverVersion: version.server_version.split(' ')[0]!,
      walSegmentSize: segmentSize ? parseSizeSetting(segmentSize) : DEFAULT_WAL_SEGMENT_SIZE,
    };
  });
}
