import type { OrmDatabase } from '@holdfast/orm-port';
import type { EventBus, HoldfastEvents, KernelLogger, StorageAlertEvent, StorageUsage } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { StorageAlertSettings } from '../settings.js';
import { StorageAlertStateEntity } from '../store/entities.js';

type Snapshot = HoldfastEvents['storage_snapshot'];

const HOUR_MS = 3_600_000;

/**
 * Storage alerts from each new snapshot the engine's storage statistics record (a listing that failed records no
 * snapshot, so it raises nothing). `usage_spike`: growth since the previous snapshot at or above the percentage;
 * `size_limit`: size at or above the destination's limit; `no_recent_backup`: the newest backup file older than
 * the hours (an empty destination raises nothing). Size-limit and no-backup alerts fire once per episode: again
 * only after the condition cleared. The snapshots are read through the engine's `StorageUsage` port; without it
 * there is no previous snapshot to compare and no usage over time.
 */
export class StorageAlerts {
  constructor(
    private readonly deps: {
      database: () => OrmDatabase;
      /** The engine's recorded snapshots (`TOKENS.StorageUsage`), when the engine runs. */
      usage: () => StorageUsage | undefined;
      settings: () => Promise<StorageAlertSettings>;
      events: () => EventBus | undefined;
      logger: KernelLogger;
      now?: () => Date;
    },
  ) {}

  private em(): EntityManager {
    return this.deps.database().em();
  }

  /** Evaluates one snapshot; answers the alerts raised. */
  async evaluate(snapshot: Snapshot): Promise<StorageAlertEvent[]> {
    const settings = await this.deps.settings();
    const now = (this.deps.now ?? (() => new Date()))();
    const raised: StorageAlertEvent[] = [];
    const base = { configId: snapshot.configId, configName: snapshot.configName, size: snapshot.size, count: snapshot.count };

    if (settings.usageSpikePercent !== null) {
      // The newest row is this snapshot; the one before it is the comparison.
      const previous = (await this.deps.usage()?.latest(snapshot.configId, 2))?.[1];
      const previousSize = previous ? previous.size : null;
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
    const points = (await this.deps.usage()?.between(configId, from, to, limit)) ?? [];
    return points.map((point) => ({ size: point.size, count: point.count, createdAt: point.createdAt.toISOString() }));
  }
}
