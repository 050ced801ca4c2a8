import type { OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import {
  instantiateAdapter,
  REMOTE_SOURCE_RUNNER,
  withTimeout,
  type AdapterConfigSummary,
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

/** What a probe found; `status` overrides the thresholds when the outcome is certain (the source's agent is offline). */
interface ProbeResult {
  ok: boolean;
  message: string;
  latencyMs?: number;
  status?: HealthStatus;
}

/**
 * The remote source runner's answer for an agent that is not connected, revoked or gone (`RemoteSourceRunner`:
 * "calls ... reject naming it"): the source cannot be reached at all, so it is OFFLINE at once, not after the
 * DEGRADED/OFFLINE thresholds of a flaky connection.
 */
const AGENT_UNREACHABLE = /^(?:\[[^\]]*\] )?(agent "[^"]*" is (?:offline|revoked)\b.*|agent \S+ not found)$/s;

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
    const outcomes: HealthOutcome[] = [];
    const catalog = this.deps.catalog();
    if (!catalog.listAdapterConfigs) throw new Error('the catalog lists no adapter configurations (JobCatalog.listAdapterConfigs missing)');
    for (const row of await this.rowsOf(await catalog.listAdapterConfigs({}))) {
      if (signal?.aborted) break;
      outcomes.push(await this.checkOne(row, thresholds));
    }
    return outcomes;
  }

  /** The sources and destinations of a listing, with their current state. */
  private async rowsOf(listed: readonly AdapterConfigSummary[]): Promise<ConfigRow[]> {
    const configs = listed.filter((config) => config.type === 'database' || config.type === 'storage');
    const states = await this.deps.states.statesOf(configs.map((config) => config.configId));
    return configs.map((config) => {
      const state = states.get(config.configId);
      return { id: config.configId, name: config.name, type: config.type, adapter_id: config.adapterId, last_status: state?.lastStatus ?? 'ONLINE', consecutive_failures: state?.consecutiveFailures ?? 0 };
    });
  }

  /**
   * Agents went offline or came back (docs/agents.md "Agent health"): every source bound to one of them gets a
   * health entry. Offline: OFFLINE at once with `agent "<name>" is offline` (nothing is probed: the source cannot be
   * reached). Back: a real check through the agent, like HEALTH_CHECK's, waiting up to `onlineWaitMs` for its
   * connection to be ready; it is ONLINE when the source answers.
   */
  async recordAgentPresence(changes: ReadonlyArray<{ agentId: string; agentName: string; online: boolean }>, onlineWaitMs = 5_000): Promise<HealthOutcome[]> {
    if (changes.length === 0) return [];
    const byAgent = new Map(changes.map((change) => [change.agentId, change]));
    const thresholds = await this.deps.thresholds();
    const catalog = this.deps.catalog();
    const summaries = catalog.listAdapterConfigs ? await catalog.listAdapterConfigs({ type: 'database', agentIds: [...byAgent.keys()] }) : [];
    const agentOf = new Map(summaries.map((summary) => [summary.configId, summary.agentId ?? '']));
    const outcomes: HealthOutcome[] = [];
    for (const row of await this.rowsOf(summaries)) {
      const change = byAgent.get(agentOf.get(row.id) ?? '');
      if (!change) continue;
      outcomes.push(
        change.online
          ? await this.checkOne(row, thresholds, onlineWaitMs)
          : await this.recordOutcome(row, thresholds, { ok: false, message: `agent "${change.agentName}" is offline`, latencyMs: 0, status: 'OFFLINE' }),
      );
    }
    return outcomes;
  }

  private async checkOne(row: ConfigRow, thresholds: HealthSettings, agentWaitMs = 0): Promise<HealthOutcome> {
    const started = Date.now();
    const result = await this.probe(row, agentWaitMs);
    return this.recordOutcome(row, thresholds, { ...result, latencyMs: result.latencyMs ?? Date.now() - started });
  }

  /** One `health_check_logs` row, the configuration's state, and `connection_offline`/`connection_online` on a change. */
  private async recordOutcome(row: ConfigRow, thresholds: HealthSettings, result: ProbeResult & { latencyMs: number }): Promise<HealthOutcome> {
    const latencyMs = result.latencyMs;
    const previousStatus = row.last_status;
    const failures = result.ok ? 0 : row.consecutive_failures + 1;
    const status = result.status ?? statusAfter(failures, thresholds);
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
  private async probe(row: ConfigRow, agentWaitMs: number): Promise<ProbeResult> {
    const kind = row.type === 'database' ? 'source' : 'storage';
    let instance: (SourceAdapter | StorageAdapter) | undefined;
    try {
      const resolved = await this.deps.catalog().resolveAdapterConfig(row.id);
      const entry = this.deps.registry().get(kind, resolved.adapterId);
      if (!entry) return { ok: false, message: `adapter ${kind}-${resolved.adapterId} is not installed` };
      const agentId = kind === 'source' ? resolved.agentId : null;
      if (agentId) {
        // A source bound to an agent is checked where it runs (issue 48), not from the server, which may not reach it.
        if (!this.deps.container.isRegistered(REMOTE_SOURCE_RUNNER, true)) return { ok: false, message: 'remote agents are not available on this server' };
        instance = this.deps.container.resolve(REMOTE_SOURCE_RUNNER).source({ ...resolved, agentId }, { logger: this.deps.logger, offlineWaitMs: agentWaitMs });
      } else {
        instance = instantiateAdapter(this.deps.container, entry.definition, resolved.config, {
          instanceId: resolved.configId,
          instanceName: resolved.name,
          logger: this.deps.logger,
          credentials: resolved.credentials,
          updateCredentials: resolved.updateCredentials,
        }) as SourceAdapter | StorageAdapter;
      }
      const timeoutMs = this.deps.timeoutMs ?? HEALTH_CHECK_TIMEOUT_MS;
      const health: { ok: boolean; message: string; latencyMs?: number } = await withTimeout<{ ok: boolean; message: string; latencyMs?: number }>(
        Promise.resolve().then(() => instance!.check()),
        timeoutMs,
        () => ({ ok: false, message: `Timed out after ${timeoutMs / 1000} seconds` }),
      );
      if (health.ok && kind === 'source') await this.recordVersion(row, instance as SourceAdapter, timeoutMs);
      // The same words as the entry written when the agent dropped, without the adapter's `[source-x]` prefix.
      const unreachable = agentId && !health.ok ? AGENT_UNREACHABLE.exec(health.message) : null;
      if (unreachable) return { ok: false, message: unreachable[1]!, status: 'OFFLINE', ...(health.latencyMs !== undefined ? { latencyMs: health.latencyMs } : {}) };
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
