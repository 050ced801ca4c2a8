import type { ResolvedAdapterConfig } from '@holdfast/kernel';
import type { Redis } from 'ioredis';

/**
 * Written into a scratch index before a test restore, holding the execution id. It tells a scratch index a crashed
 * test restore left (its execution ended) from data someone else keeps there, which is never flushed.
 */
export const SCRATCH_MARKER_KEY = 'holdfast:test-restore';

/** Keys of one database index: all of them, and those with an expiry (`INFO keyspace`). */
export interface KeyFigures {
  keys: number;
  expires: number;
}

function settingsOf(config: ResolvedAdapterConfig) {
  const settings = config.config as { host?: string; port?: number; username?: string; password?: string; tls?: boolean; tlsRejectUnauthorized?: boolean; connectTimeoutSeconds?: number };
  const primary = config.credentials.primary as { username?: string; password?: string } | undefined;
  return {
    host: settings.host ?? '127.0.0.1',
    port: Number(settings.port ?? 6379),
    username: settings.username ?? primary?.username,
    password: settings.password ?? primary?.password,
    tls: settings.tls ? { rejectUnauthorized: settings.tlsRejectUnauthorized ?? true, servername: settings.host } : undefined,
    connectTimeout: (settings.connectTimeoutSeconds ?? 10) * 1000,
  };
}

/** `host:port` of the server a Redis source configuration reaches (to tell whether two configurations share one). */
export function redisServerOf(config: ResolvedAdapterConfig): string {
  const { host, port } = settingsOf(config);
  return `${host}:${port}`;
}

/** Runs `work` on a client connected to database `db`; a missing index or a refused login rejects with its reason. */
export async function withRedis<T>(config: ResolvedAdapterConfig, db: number, work: (client: Redis) => Promise<T>): Promise<T> {
  // Loaded on first use: test restores are rare, and the client would otherwise sit in every process's memory.
  const { Redis: RedisClient } = await import('ioredis');
  const client = new RedisClient({
    ...settingsOf(config),
    lazyConnect: true,
    // A test restore must fail, not wait: no reconnect loop, no offline queue (as the source adapter).
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectionName: 'holdfast-test-restore',
  });
  let cause: unknown;
  client.on('error', (error: unknown) => {
    cause ??= error;
  });
  try {
    try {
      await client.connect();
      // Selected explicitly: ioredis only logs a failing `db` option, and an index the server lacks must fail here.
      if (db !== 0) await client.select(db);
    } catch (error) {
      const reason = cause ?? error;
      throw new Error(`cannot use database ${db} of Redis ${config.name} (${redisServerOf(config)}): ${reason instanceof Error ? reason.message : String(reason)}`);
    }
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/** Parses `INFO keyspace` (`db0:keys=12,expires=3,avg_ttl=0`) into figures per index. */
export function parseKeyspace(info: string): Map<number, KeyFigures> {
  const figures = new Map<number, KeyFigures>();
  for (const match of info.matchAll(/^db(\d+):keys=(\d+),expires=(\d+)/gm)) {
    figures.set(Number(match[1]), { keys: Number(match[2]), expires: Number(match[3]) });
  }
  return figures;
}

/** Keys and keys with an expiry of database `db` (zero for an empty index, which `INFO keyspace` leaves out). */
export async function keyFigures(config: ResolvedAdapterConfig, db: number): Promise<KeyFigures> {
  return withRedis(config, db, async (client) => parseKeyspace(await client.info('keyspace')).get(db) ?? { keys: 0, expires: 0 });
}
