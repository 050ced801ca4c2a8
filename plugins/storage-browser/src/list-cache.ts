import { defineMigration, type OrmDatabase } from '@holdfast/orm-port';
import { defineEntity, p } from '@mikro-orm/core';
import type { Knex } from '@mikro-orm/knex';
import type { FileEntry } from './file-listing.js';

const TABLE = 'storage_list_cache';

/** SPEC "StorageListCache": the last listing of one destination. */
export const StorageListCacheEntity = defineEntity({
  name: 'StorageListCache',
  tableName: TABLE,
  properties: {
    adapterConfigId: p.string().primary().length(36),
    filesJson: p.text(),
    cachedAt: p.datetime(),
  },
});

/** Creates `storage_list_cache` (one row per destination, keyed by its configuration id). */
export const createStorageListCacheTable = defineMigration('20261122-storage-browser-001-list-cache', async (knex) => {
  await knex.schema.createTable(TABLE, (t) => {
    t.string('adapter_config_id', 36).primary();
    t.text('files_json').notNullable();
    t.datetime('cached_at', { useTz: true }).notNullable();
  });
});

/** Default age after which a cached listing is read again from the destination. */
export const DEFAULT_LIST_CACHE_TTL_MS = 60_000;

function dateOf(value: Date | string | number): Date {
  return value instanceof Date ? value : new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
}

/**
 * Listings kept in the database, so every server process shares them and an invalidation on one process reaches
 * the others. Entries older than the TTL are ignored; uploads, deletes and lock changes drop them.
 */
export class StorageListCache {
  constructor(
    private readonly database: OrmDatabase,
    private readonly ttlMs: number = DEFAULT_LIST_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  private knex(): Knex {
    return this.database.em().getKnex();
  }

  private toDb(date: Date): unknown {
    return this.database.em().getPlatform().processDateProperty(date);
  }

  /** The cached listing when it is younger than the TTL. */
  async get(configId: string): Promise<{ files: FileEntry[]; cachedAt: Date } | null> {
    const row: { files_json: string; cached_at: Date | string | number } | undefined = await this.knex()(TABLE).select('files_json', 'cached_at').where({ adapter_config_id: configId }).first();
    if (!row) return null;
    const cachedAt = dateOf(row.cached_at);
    if (this.now() - cachedAt.getTime() >= this.ttlMs) return null;
    return { files: JSON.parse(row.files_json) as FileEntry[], cachedAt };
  }

  async put(configId: string, files: FileEntry[]): Promise<void> {
    const row = { adapter_config_id: configId, files_json: JSON.stringify(files), cached_at: this.toDb(new Date(this.now())) };
    await this.knex()(TABLE).insert(row).onConflict('adapter_config_id').merge(['files_json', 'cached_at']);
  }

  /** Drops one destination's listing, or every listing when no id is given (a backup may have written to any). */
  async invalidate(configId?: string): Promise<void> {
    const query = this.knex()(TABLE);
    await (configId === undefined ? query.delete() : query.where({ adapter_config_id: configId }).delete());
  }
}
