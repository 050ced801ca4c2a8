import type { OrmDatabase } from '@holdfast/orm-port';
import type { EventBus, HoldfastEvents, KernelLogger, StorageAlertEvent } from '@holdfast/kernel';
import type { EntityManager, Knex } from '@mikro-orm/knex';
import type { StorageAlertSettings } from '../settings.js';
import { StorageAlertStateEntity } from '../store/entities.js';

type Snapshot = HoldfastEvents['storage_snapshot'];

const HOUR_MS = 3_600_000;

/**
 * Storage alerts from each new snapshot the engine's storage statistics record (a listing that failed records no
 * snapshot, so it raises nothing). `usage_spike`: growth since the previous snapshot at or above the percentage;
 * `size_limit`: size at or above the destination's limit; `no_recent_backup`: the newest backup file older than
 * the hours (an empty destination raises nothing). Size-limit and no-backup alerts fire once per episode: again
 * only after the condition cleared.
 */
export class StorageAlerts {
  constructor(
    private readonly deps: {
      database: () => OrmDatabase;
      settings: () => Promise<StorageAlertSettings>;
      events: () => EventBus | undefined;
      logger: KernelLogger;
      now?: () => Date;
    },
  ) {}

  private em(): EntityManager {
    return this.deps.database().em();
  }

  private knex(): Knex {
    return this.em().getKnex();
  }

  /** Evaluates one snapshot; answers the alerts raised. */
  async evaluate(snapshot: Snapshot): Promise<StorageAlertEvent[]> {
    const settings = await this.deps.settings();
    const now = (this.deps.now ?? (() => new Date()))();
    const raised: StorageAlertEvent[] = [];
    const base = { configId: snapshot.configId, configName: snapshot.configName, size: snapshot.size, count: snapshot.count };

    if (settings.usageSpikePercent !== null) {
      // The newest row is this snapshot; the one before it is the comparison.
      const previous: { size: number | string } | undefined = await this.knex()('storage_snapshots')
        .select('size')
        .where({ adapter_config_id: snapshot.configId })
        .orderBy('created_at', 'desc')
        .offset(1)
        .first();
      const previousSize = previous ? Number(previous.size) : null;
      if (previousSize !== null && previousSize > 0 && ((snapshot.size - previousSize) / previousSize) * 100 >= settings.usageSpikePercent) {
        const growth = Math.round(((snapshot.size - previousSize) / previousSize) * 100);
        raised.push({ alert: 'usage_spike', ...base, previousSize, message: `${snapshot.configName} grew by ${growth}% since the previous snapshot (${previousSize} -> ${snapshot.size} bytes).` });
      }
    }

    const limit = settings.sizeLimits[snapshot.configId];
    if (await this.episode(`size_limit:${snapshot.configId}`, limit !== undefined && snapshot.size >= limit, now)) {
      raised.push({ alert: 'size_limit', ...base, limit, message: `${snapshot.configName} holds ${snapshot.size} bytes, at or above its limit of ${limit} bytes.` });
    }

    const newest = snapshot.newestBackupAt ? new Date(snapshot.newestBackupAt) : null;
    const hours = newest ? (now.getTime() - newest.getTime()) / HOUR_MS : null;
    const isStale = settings.noBackupHours !== null && hours !== null && hours >= settings.noBackupHours;
    if (await this.episode(`no_recent_backup:${snapshot.configId}`, isStale, now)) {
      raised.push({
        alert: 'no_recent_backup',
        ...base,
        hoursSinceLastBackup: Math.floor(hours ?? 0),
        message: `${snapshot.configName} has had no new backup for ${Math.floor(hours ?? 0)} hours (threshold ${settings.noBackupHours}).`,
      });
    }

    for (const alert of raised) await this.deps.events()?.emit('storage_alert', alert);
    return raised;
  }

  /** True when `isActive` starts a new episode of `key` (stored), false while it continues; clears when inactive. */
  private async episode(key: string, isActive: boolean, now: Date): Promise<boolean> {
    const em = this.em();
    const state = await em.findOne(StorageAlertStateEntity, { key });
    if (!isActive) {
      if (state) await em.nativeDelete(StorageAlertStateEntity, { key });
      return false;
    }
    if (state) return false;
    em.create(StorageAlertStateEntity, { key, raisedAt: now });
    await em.flush();
    return true;
  }

  /** Usage over time of one destination: its snapshots in a window, oldest first. */
  async usage(configId: string, from: Date, to: Date, limit: number): Promise<Array<{ size: number; count: number; createdAt: string }>> {
    const platform = this.em().getPlatform();
    const rows: Array<{ size: number | string; count: number | string; created_at: Date | number | string }> = await this.knex()('storage_snapshots')
      .select('size', 'count', 'created_at')
      .where({ adapter_config_id: configId })
      .andWhere('created_at', '>=', platform.processDateProperty(from) as never)
      .andWhere('created_at', '<=', platform.processDateProperty(to) as never)
      .orderBy('created_at', 'asc')
      .limit(limit);
    return rows.map((row) => ({ size: Number(row.size), count: Number(row.count), createdAt: dateOf(row.created_at).toISOString() }));
  }
}

/** A datetime column as libsql (epoch ms or text) or PostgreSQL (Date) returns it. */
export function dateOf(value: Date | number | string): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  return /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
}
