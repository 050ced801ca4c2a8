import { defineMigration, type OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import type { EventBus, JobCatalog, KernelLogger } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import { disposeAll, type AdapterFactory, type StorageInstance } from '../run/adapters.js';
import { isSidecarKey } from '../run/sidecar.js';
import { isChangeLogKey } from '../pitr/segment-key.js';
import type { JobDirectory } from '../scheduler/job-directory.js';
import { dateOf } from '../history/history-store.js';
import { raiseSystemError } from '../run/system-error.js';

/** Default refresh period of the storage statistics cache (SPEC: hourly). */
export const STORAGE_STATS_INTERVAL_MS = 60 * 60 * 1000;

/**
 * After-backup refreshes keep listing at most this share of the time: a refresh that took 300 ms is followed by the
 * next after-backup one no sooner than 2.7 s later. Small destinations list in milliseconds and refresh at once;
 * a destination with tens of thousands of objects under a steady stream of backups (scale-out) is not listed back
 * to back by every process. The backups that ended meanwhile are counted by the deferred refresh.
 */
const AFTER_BACKUP_DUTY_CYCLE = 0.1;
/** Longest deferral of an after-backup refresh, whatever a listing costs. */
const MAX_AFTER_BACKUP_DEFERRAL_MS = 5 * 60_000;

/**
 * `storage_snapshots` (SPEC "StorageSnapshot"): one row per destination per refresh, so the dashboard reads the
 * latest row per destination and usage over time stays queryable. Also adds the `ended_at` index the dashboard's
 * 24-hour and 30-day figures filter on.
 */
export const createStorageSnapshotTable = defineMigration('20261121-engine-100-storage-snapshots', async (knex) => {
  await knex.schema.createTable('storage_snapshots', (t) => {
    t.string('id', 36).primary();
    t.string('adapter_config_id', 36).notNullable();
    t.string('adapter_name', 255).notNullable();
    t.string('adapter_id', 64).notNullable();
    t.bigInteger('size').notNullable().defaultTo(0);
    t.integer('count').notNullable().defaultTo(0);
    t.datetime('created_at', { useTz: true }).notNullable();
    t.index(['adapter_config_id', 'created_at'], 'storage_snapshots_adapter_config_id_created_at_index');
  });
  await knex.schema.alterTable('executions', (t) => {
    t.index(['type', 'ended_at'], 'executions_type_ended_at_index');
  });
});

/** Totals of the latest snapshot of every current destination. */
export interface StorageTotals {
  totalSnapshots: number;
  totalStorageBytes: number;
  storageUpdatedAt: string | null;
}

/**
 * The storage statistics cache: lists every storage destination, counts its backups (sidecars excluded) and sums
 * the bytes of every object, and records one snapshot row per destination. Refreshes on a timer and, coalesced,
 * after every backup outcome event. A destination that cannot be listed keeps its previous snapshot.
 */
export class StorageStats {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private isQueued = false;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly controller = new AbortController();
  private events: EventBus | undefined;
  private lastEndedAt = 0;
  private lastDurationMs = 0;
  private deferred: NodeJS.Timeout | undefined;
  /** A backup ended while a refresh ran: one more after-backup refresh is due once it ends. */
  private isBackupPending = false;

  constructor(
    private readonly database: OrmDatabase,
    private readonly deps: { jobs: () => JobDirectory; catalog: () => JobCatalog; adapters: () => AdapterFactory; logger: KernelLogger },
  ) {}

  private knex(): Knex {
    return this.database.em().getKnex();
  }

  /** Refreshes at once, then every `intervalMs` and after each backup outcome. */
  start(intervalMs: number, events: EventBus | undefined): void {
    this.timer = setInterval(() => void this.refresh(), intervalMs).unref();
    this.events = events;
    for (const name of ['backup_success', 'backup_partial', 'backup_failure'] as const) {
      if (events) this.unsubscribe.push(events.on(name, () => this.refreshAfterBackup()));
    }
    // The REFRESH_STORAGE_STATS system task (observability plugin) asks for a refresh and waits for it.
    if (events) this.unsubscribe.push(events.on('storage_stats_refresh', () => this.refresh()));
    void this.refresh();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.deferred);
    for (const off of this.unsubscribe.splice(0)) off();
    this.controller.abort();
    await this.running;
  }

  /** A backup ended: refresh now, or once the duty cycle allows (one deferred refresh covers every backup meanwhile). */
  private refreshAfterBackup(): void {
    if (this.deferred || this.controller.signal.aborted) return;
    if (this.running) {
      this.isBackupPending = true;
      return;
    }
    const gap = Math.min(MAX_AFTER_BACKUP_DEFERRAL_MS, (this.lastDurationMs * (1 - AFTER_BACKUP_DUTY_CYCLE)) / AFTER_BACKUP_DUTY_CYCLE);
    const wait = this.lastEndedAt + gap - Date.now();
    if (wait <= 0) {
      void this.refresh();
      return;
    }
    this.deferred = setTimeout(() => {
      this.deferred = undefined;
      void this.refresh();
    }, wait).unref();
  }

  /** One refresh; a call while one runs queues exactly one more (the backup that just ended must be counted). */
  refresh(): Promise<void> {
    if (this.running) {
      this.isQueued = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.isQueued = false;
        const startedAt = Date.now();
        await this.refreshAll().catch((error: unknown) => {
          this.deps.logger.error({ err: error }, 'storage statistics refresh failed');
          raiseSystemError(this.events, 'storage-statistics', 'Refreshing the storage statistics failed', error);
        });
        this.lastEndedAt = Date.now();
        this.lastDurationMs = this.lastEndedAt - startedAt;
      } while (this.isQueued && !this.controller.signal.aborted);
    })().finally(() => {
      this.running = undefined;
      if (this.isBackupPending) {
        this.isBackupPending = false;
        this.refreshAfterBackup();
      }
    });
    return this.running;
  }

  private async refreshAll(): Promise<void> {
    for (const destination of await this.deps.jobs().storageDestinations()) {
      if (this.controller.signal.aborted) return;
      let instance: StorageInstance | undefined;
      try {
        instance = this.deps.adapters().storage(await this.deps.catalog().resolveAdapterConfig(destination.configId));
        let count = 0;
        let size = 0;
        let newest = 0;
        for await (const object of instance.adapter.list('', { signal: this.controller.signal })) {
          size += object.size;
          if (!isSidecarKey(object.key) && !isChangeLogKey(object.key)) {
            count += 1;
            newest = Math.max(newest, new Date(object.modifiedAt).getTime() || 0);
          }
        }
        await this.knex()('storage_snapshots').insert({
          id: randomUUID(),
          adapter_config_id: destination.configId,
          adapter_name: destination.name,
          adapter_id: destination.adapterId,
          size,
          count,
          created_at: this.database.em().getPlatform().processDateProperty(new Date()),
        });
        // Storage alerts (observability plugin) read each new snapshot; a listing error above emits nothing.
        const snapshot = { configId: destination.configId, configName: destination.name, adapterId: destination.adapterId, size, count, newestBackupAt: newest ? new Date(newest).toISOString() : null };
        void this.events?.emit('storage_snapshot', snapshot).catch(() => undefined);
      } catch (error) {
        this.deps.logger.warn({ err: error, configId: destination.configId }, 'storage statistics: listing a destination failed; keeping its last snapshot');
      } finally {
        await disposeAll([instance?.adapter]);
      }
    }
  }

  /** Sums the latest snapshot of each current destination. */
  async totals(): Promise<StorageTotals> {
    let totalSnapshots = 0;
    let totalStorageBytes = 0;
    let updatedAt: Date | null = null;
    for (const destination of await this.deps.jobs().storageDestinations()) {
      const row: { size: number | string; count: number | string; created_at: Date | number | string } | undefined = await this.knex()('storage_snapshots')
        .select('size', 'count', 'created_at')
        .where({ adapter_config_id: destination.configId })
        .orderBy('created_at', 'desc')
        .first();
      if (!row) continue;
      totalSnapshots += Number(row.count);
      totalStorageBytes += Number(row.size);
      const at = dateOf(row.created_at);
      if (!updatedAt || at > updatedAt) updatedAt = at;
    }
    return { totalSnapshots, totalStorageBytes, storageUpdatedAt: updatedAt ? updatedAt.toISOString() : null };
  }
}
