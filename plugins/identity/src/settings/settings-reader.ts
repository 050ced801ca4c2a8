import type { DatabasePort } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { SystemSettingEntity } from '../entities/system-setting.js';

/**
 * Reads system settings with a short cache so a change made by any process applies within `ttlMs`
 * without a restart. `invalidate()` applies a change made in this process at once.
 */
export class SettingsReader {
  private cache: { values: Map<string, string>; loadedAt: number } | undefined;
  private loading: Promise<Map<string, string>> | undefined;

  constructor(
    private readonly database: DatabasePort,
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The raw value of `key`, or undefined when unset. */
  async get(key: string): Promise<string | undefined> {
    return (await this.all()).get(key);
  }

  /** An integer setting; `fallback` when unset or not a positive integer. */
  async getPositiveInt(key: string, fallback: number): Promise<number> {
    const raw = await this.get(key);
    if (raw === undefined) return fallback;
    const value = Number(raw.trim());
    return Number.isInteger(value) && value > 0 ? value : fallback;
  }

  /** Writes (upserts) a setting and drops the cache. The catalog plugin will own the settings API later. */
  async set(key: string, value: string, description?: string): Promise<void> {
    const em = this.database.em() as EntityManager;
    await em.upsert(SystemSettingEntity, { key, value, description: description ?? null, updatedAt: new Date() });
    this.invalidate();
  }

  /** Forget cached values; the next read goes to the database. */
  invalidate(): void {
    this.cache = undefined;
  }

  private async all(): Promise<Map<string, string>> {
    if (this.cache && this.now() - this.cache.loadedAt < this.ttlMs) return this.cache.values;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<Map<string, string>> {
    const em = this.database.em() as EntityManager;
    const rows = await em.find(SystemSettingEntity, {});
    const values = new Map(rows.map((row) => [row.key, row.value]));
    this.cache = { values, loadedAt: this.now() };
    return values;
  }
}
