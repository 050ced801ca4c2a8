import { AdapterError, type ScratchDatabaseIndex } from '@holdfast/sdk';
import type { RedisSourceConfig } from '../config.js';
import { ORIGIN, withClient } from './connection.js';

/** The key holding the owner (a test restore's execution id) of a scratch index; it has no expiry. */
export const SCRATCH_OWNER_KEY = 'holdfast:test-restore';

/** `INFO keyspace` (`db0:keys=12,expires=3,avg_ttl=0`) figures of index `db`; an empty index is left out, so zero. */
export function keyspaceFigures(info: string, db: number): { keys: number; expires: number } {
  const match = new RegExp(`^db${db}:keys=(\\d+),expires=(\\d+)`, 'm').exec(info);
  return { keys: Number(match?.[1] ?? 0), expires: Number(match?.[2] ?? 0) };
}

/** A scratch "database" is an index: a number given as text. */
function indexOf(database: string): number {
  const db = Number(database);
  if (!Number.isInteger(db) || db < 0) throw new AdapterError(ORIGIN, 'CONFIG', `"${database}" is not a database index`);
  return db;
}

/**
 * The index reserved for test restores on the server this configuration reaches directly. A backup in rdb mode is
 * a whole-server snapshot that cannot be restored into a running server, and over SSH Holdfast has no connection
 * of its own to the index, so such configurations cannot take part.
 */
export function redisScratch(config: RedisSourceConfig): ScratchDatabaseIndex {
  if (config.mode === 'rdb') {
    throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'backups in rdb mode cannot be test-restored: an RDB snapshot cannot be restored into a running server (use the logical mode)');
  }
  if (config.ssh) {
    throw new AdapterError(ORIGIN, 'UNSUPPORTED', 'test restores need a direct connection to the server; this configuration reaches it over SSH');
  }
  return {
    placement: 'index',
    counts: 'keys',
    server: `${config.host}:${config.port}`,
    figures: (database) => {
      const db = indexOf(database);
      return withClient(config, db, async (client) => keyspaceFigures(await client.info('keyspace'), db));
    },
    // RESTORE checks each key's payload (its checksum) as it goes; there is nothing to check afterwards.
    integrityCheck: () => Promise.resolve(null),
    readOwner: (database) => withClient(config, indexOf(database), (client) => client.get(SCRATCH_OWNER_KEY)),
    writeOwner: async (database, owner) => {
      await withClient(config, indexOf(database), (client) => client.set(SCRATCH_OWNER_KEY, owner));
    },
    dropDatabase: async (database) => {
      await withClient(config, indexOf(database), (client) => client.flushdb());
    },
  };
}
