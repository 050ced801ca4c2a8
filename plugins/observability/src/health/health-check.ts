import type { OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import {
  instantiateAdapter,
  withTimeout,
  type AdapterRegistry,
  type EventBus,
  type JobCatalog,
  type KernelLogger,
  type SourceAdapter,
  type StorageAdapter,
} from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { DependencyContainer } from 'tsyringe';
import type { HealthSettings } from '../settings.js';
import { HealthCheckLogEntity } from '../store/entities.js';
import type { AdapterHealthStore } from './adapter-health.js';

export type HealthStatus = 'ONLINE' | 'DEGRADED' | 'OFFLINE';

/** A check that never answers counts as failed after this long. */
export const HEALTH_CHECK_TIMEOUT_MS = 30_000;

/** One checked adapter configuration. */
export interface HealthOutcome {
  configId: string;
  name: string;
  ok: boolean;
  status: HealthStatus;
  previousStatus: HealthStatus;
  latencyMs: number;
  error?: string;
}

/** The status after `failures` consecutive failed checks (0: the last check succeeded). */
export function statusAfter(failures: number, thresholds: Pick<HealthSettings, 'degradedAfter' | 'offlineAfter'>): HealthStatus {
  if (failures >= thresholds.offlineAfter) return 'OFFLINE';
  if (failures >= thresholds.degradedAfter) return 'DEGRADED';
  return 'ONLINE';
}

interface ConfigRow {
  id: string;
  name: string;
  type: string;
  adapter_id: string;
  last_status: HealthStatus;
  consecutive_failures: number;
}

/**
 * HEALTH_CHECK: `check()` on every source and storage destination (listed through the catalog's
 * `JobCatalog.listAdapterConfigs`), a `health_check_logs` row each, and the configuration's `lastHealthCheck`,
 * `lastStatus`, `lastError`, `consecutiveFailures` in observability's `adapter_health`. Moving into OFFLINE raises
 * `connection_offline`; leaving OFFLINE for ONLINE raises `connection_online` (DEGRADED and back is silent).
 */
export class HealthChecker {
  constructor(
    private readonly deps: {
      container: DependencyContainer;
      database: () => OrmDatabase;
      /** The current state of each configuration (observability's `adapter_health`). */
      states: AdapterHealthStore;
      catalog: () => JobCatalog;
      registry: () => AdapterRegistry;
      events: () => EventBus | undefined;
      thresholds: () => Promise<HealthSettings>;
      logger: KernelLogger;
      timeoutMs?: number;
    },
  ) {}

  private em(): EntityManager {
    return this.deps.database().em();
  }

  async checkAll(signal?: AbortSignal): Promise<HealthOutcome[]> {
    const thresholds = await this.deps.thresholds();
    const catalog = this.deps.catalog();
    if (!catalog.listAdapterConfigs) throw new Error('the catalog lists no adapter configurations (JobCatalog.listAdapterConfigs missing)');
    const configs = (await catalog.listAdapterConfigs({})).filter((config) => config.type === 'database' || config.type === 'storage');
    const states = await this.deps.states.statesOf(configs.map((config) => config.configId));
    const rows: ConfigRow[] = configs.map((config) => {
      const state = states.get(config.configId);
      return { id: config.configId, name: config.name, type: config.type, adapter_id: config.adapterId, last_status: state?.lastStatus ?? 'ONLINE', consecutive_failures: state?.consecutiveFailures ?? 0 };
    });
    const outcomes: HealthOutcome[] = [];
    for (const row of rows) {
      if (signal?.aborted) break;
      outcomes.push(await this.checkOne(row, thresholds));
    }
    return outcomes;
  }

  private async checkOne(row: ConfigRow, thresholds: HealthSettings): Promise<HealthOutcome> {
    const started = Date.now();
    const result = await this.probe(row);
    const latencyMs = result.latencyMs ?? Date.now() - started;
    const previousStatus = row.last_status;
    const failures = result.ok ? 0 : row.consecutive_failures + 1;
    const status = statusAfter(failures, thresholds);
    const now = new Date();
    const em = this.em();
    em.create(HealthCheckLogEntity, { id: randomUUID(), adapterConfigId: row.id, status, latencyMs: Math.max(0, Math.round(latencyMs)), error: result.ok ? null : result.message.slice(0, 2000), createdAt: now });
    await em.flush();
    await this.deps.states.record(row.id, { lastHealthCheck: now, lastStatus: status, lastError: result.ok ? null : result.message.slice(0, 2000), consecutiveFailures: failures });
    const outcome: HealthOutcome = { configId: row.id, name: row.name, ok: result.ok, status, previousStatus, latencyMs, ...(result.ok ? {} : { error: result.message }) };
    const eventName = status === 'OFFLINE' && previousStatus !== 'OFFLINE' ? 'connection_offline' : status === 'ONLINE' && previousStatus === 'OFFLINE' ? 'connection_online' : null;
    if (eventName) {
      await this.deps
        .events()
        ?.emit(eventName, {
          configId: row.id,
          configName: row.name,
          type: row.type,
          adapterId: row.adapter_id,
          status,
          previousStatus,
          consecutiveFailures: failures,
          ...(result.ok ? {} : { error: result.message }),
        });
    }
    return outcome;
  }

  /** Never throws: a configuration that cannot even be built is a failed check with the reason. */
  private async probe(row: ConfigRow): Promise<{ ok: boolean; message: string; latencyMs?: number }> {
    const kind = row.type === 'database' ? 'source' : 'storage';
    let instance: (SourceAdapter | StorageAdapter) | undefined;
    try {
      const resolved = await this.deps.catalog().resolveAdapterConfig(row.id);
      const entry = this.deps.registry().get(kind, resolved.adapterId);
      if (!entry) return { ok: false, message: `adapter ${kind}-${resolved.adapterId} is not installed` };
      instance = instantiateAdapter(this.deps.container, entry.definition, resolved.config, {
        instanceId: resolved.configId,
        instanceName: resolved.name,
        logger: this.deps.logger,
        credentials: resolved.credentials,
        updateCredentials: resolved.updateCredentials,
      }) as SourceAdapter | StorageAdapter;
      const timeoutMs = this.deps.timeoutMs ?? HEALTH_CHECK_TIMEOUT_MS;
      const health: { ok: boolean; message: string; latencyMs?: number } = await withTimeout<{ ok: boolean; message: string; latencyMs?: number }>(
        Promise.resolve().then(() => instance!.check()),
        timeoutMs,
        () => ({ ok: false, message: `Timed out after ${timeoutMs / 1000} seconds` }),
      );
      if (health.ok && kind === 'source') await this.recordVersion(row, instance as SourceAdapter, timeoutMs);
      return { ok: health.ok, message: health.message, ...(health.latencyMs !== undefined ? { latencyMs: health.latencyMs } : {}) };
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    } finally {
      await instance?.dispose?.().catch(() => undefined);
    }
  }

  /**
   * A source that answered its check also records its engine version (issue 13: every connection test, health check
   * and backup does), so a server upgraded between backups is noticed at the next check. A failure here is logged and
   * does not turn a healthy check into a failed one: the source did answer.
   */
  private async recordVersion(row: ConfigRow, source: SourceAdapter, timeoutMs: number): Promise<void> {
    const catalog = this.deps.catalog();
    if (!catalog.recordSourceVersion) return;
    try {
      const detected = await withTimeout<{ version?: string; edition?: string } | null>(
        Promise.resolve().then(() => source.detectVersion()),
        timeoutMs,
        () => null,
      );
      if (!detected) throw new Error(`version detection timed out after ${timeoutMs / 1000} seconds`);
      if (detected.version) await catalog.recordSourceVersion(row.id, detected.version, detected.edition);
    } catch (error) {
      this.deps.logger.warn(`health check of ${row.name}: version not recorded: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** One page of an adapter's health history, newest first. */
  async history(configId: string, page: number, pageSize: number): Promise<{ entries: Array<{ id: string; adapterConfigId: string; status: string; latencyMs: number; error: string | null; createdAt: string }>; total: number }> {
    const [rows, total] = await this.em().findAndCount(
      HealthCheckLogEntity,
      { adapterConfigId: configId },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: pageSize, offset: (page - 1) * pageSize },
    );
    return {
      entries: rows.map((row) => ({ id: row.id, adapterConfigId: row.adapterConfigId, status: row.status, latencyMs: row.latencyMs, error: row.error ?? null, createdAt: new Date(row.createdAt).toISOString() })),
      total,
    };
  }

  async prune(olderThan: Date): Promise<number> {
    return this.em().nativeDelete(HealthCheckLogEntity, { createdAt: { $lt: olderThan } });
  }
}
