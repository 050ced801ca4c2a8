import type { Redis } from 'ioredis';
import { AdapterError, maskSecrets, type SshTarget } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { openTunnel } from './ssh-tunnel.js';

/** How errors name this adapter. */
export const ORIGIN = { kind: 'source', id: 'redis' } as const;

/** Removes the password from any text that might echo it, keeping the text's words (the shared masking rule). */
export function scrub(text: string, config: RedisSourceConfig): string {
  return maskSecrets(text, [config.password]);
}

/** Maps a client failure to a coded error whose message holds no secret. */
export function connectionError(error: unknown, config: RedisSourceConfig, database?: number): AdapterError {
  const raw = scrub(error instanceof Error ? error.message : String(error), config);
  const who = config.username ? ` as ${config.username}` : '';
  if (/WRONGPASS|NOAUTH|NOPERM|invalid password|invalid username/i.test(raw)) {
    return new AdapterError(ORIGIN, 'AUTH', `cannot log in to ${config.host}:${config.port}${who}: ${raw}`, { cause: error });
  }
  if (/DB index is out of range/i.test(raw)) {
    return new AdapterError(ORIGIN, 'NOT_FOUND', `database ${String(database)} does not exist on ${config.host}:${config.port}: ${raw}`, { cause: error });
  }
  return new AdapterError(ORIGIN, 'TRANSIENT', `cannot connect to ${config.host}:${config.port}${who}: ${raw}`, { cause: error });
}

/**
 * Opens a connected client on database `db`; a failure (login, unknown index, unreachable) rejects with a coded error.
 * In SSH mode the client connects to a port forward over `ssh` (see ssh-tunnel.ts), closed with the client.
 */
export async function openClient(config: RedisSourceConfig, db: number, ssh?: SshTarget): Promise<Redis> {
  // The driver is loaded by the first connection, so a server that never backs up this engine does not carry it.
  const { Redis: RedisClient } = await import('ioredis');
  const tunnel = ssh ? await openTunnel(ssh, config.host, config.port) : undefined;
  const client = new RedisClient({
    host: tunnel ? '127.0.0.1' : config.host,
    port: tunnel?.port ?? config.port,
    username: config.username,
    password: config.password,
    tls: config.tls ? { rejectUnauthorized: config.tlsRejectUnauthorized, servername: config.host } : undefined,
    connectTimeout: config.connectTimeoutSeconds * 1000,
    lazyConnect: true,
    // A backup must fail, not wait: no reconnect loop, no offline queue.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectionName: 'holdfast',
  });
  // Without reconnects, connect() rejects with a bare "Connection is closed."; the 'error' event has the cause.
  let cause: unknown;
  client.on('error', (error: unknown) => {
    cause ??= error;
  });
  if (tunnel) client.once('end', () => tunnel.close());
  try {
    await client.connect();
    // Selected explicitly (not through the `db` option, whose failure ioredis only logs), so an index the server
    // does not have fails here.
    if (db !== 0) await client.select(db);
    return client;
  } catch (error) {
    client.disconnect();
    tunnel?.close();
    throw connectionError(cause ?? error, config, db);
  }
}

/** Runs `work` with a client on `db`, closing it afterwards. */
export async function withClient<T>(config: RedisSourceConfig, db: number, work: (client: Redis) => Promise<T>, ssh?: SshTarget): Promise<T> {
  const client = await openClient(config, db, ssh);
  try {
    return await work(client);
  } catch (error) {
    throw error instanceof AdapterError ? error : connectionError(error, config, db);
  } finally {
    client.disconnect();
  }
}

/** Version and edition from `INFO server`: Valkey reports `valkey_version` (and `server_name:valkey`). */
export function parseServerInfo(info: string): { version: string; edition: string } {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const valkey = field('valkey_version');
  if (valkey || field('server_name') === 'valkey') return { version: valkey ?? field('redis_version') ?? 'unknown', edition: 'Valkey' };
  return { version: field('redis_version') ?? 'unknown', edition: 'Redis' };
}

/** Database indexes holding keys, from `INFO keyspace`. */
export function parseKeyspace(info: string): number[] {
  return [...info.matchAll(/^db(\d+):keys=(\d+)/gm)].filter((match) => Number(match[2]) > 0).map((match) => Number(match[1]));
}
