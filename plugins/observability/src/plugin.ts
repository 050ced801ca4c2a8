import { ORM_DATABASE } from '@holdfast/orm-port';
import { optionalToken, resolveOptional, TOKENS, type EventBus, type HoldfastPlugin, type KernelLogger } from '@holdfast/kernel';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { ConfigBackup } from './config-backup/config-backup.js';
import { updateDbVersions } from './health/db-versions.js';
import { AdapterHealthStore } from './health/adapter-health.js';
import { HealthChecker } from './health/health-check.js';
import { AgentPresenceHealth } from './health/agent-presence.js';
import { INTEGRITY_CHECK_TASK, runIntegrityTask } from './integrity/integrity-task.js';
import { HoldfastMetrics, HttpLatencyObserver } from './metrics/metrics.js';
import { metricsAccessFromEnv } from './metrics/metrics-access.js';
import { observabilityRoutes } from './routes/observability-routes.js';
import { systemTaskRoutes } from './routes/system-task-routes.js';
import { ObservabilitySettings } from './settings.js';
import { StorageAlerts } from './storage/storage-alerts.js';
import { HealthCheckLogEntity, ObservabilitySettingEntity, StorageAlertStateEntity, SystemTaskRunEntity, SystemTaskScheduleEntity } from './store/entities.js';
import { createAdapterHealthTable, createObservabilityTables } from './store/migration.js';
import { createSystemTaskSchedulesTable } from './store/system-task-schedules-migration.js';
import { TaskRunStore } from './tasks/run-store.js';
import { DEFAULT_TASK_RUNNER_OPTIONS, SystemTaskRunner, type TaskHandler, type TaskRunnerOptions, type TaskSchedule } from './tasks/runner.js';
import { SystemTaskDefinitions } from './tasks/task-definitions.js';

/**
 * The system tasks of SPEC (schedules in this plugin's `system_task_schedules`) plus this plugin's own configuration backup and
 * scheduled integrity check (schedules in the observability settings).
 */
export const SYSTEM_TASK_NAMES = ['HEALTH_CHECK', 'CLEAN_OLD_LOGS', 'UPDATE_DB_VERSIONS', 'REFRESH_STORAGE_STATS', 'CONFIG_BACKUP', 'INTEGRITY_CHECK'] as const;

/** The running observability services (tests reach them through {@link OBSERVABILITY}). */
export interface ObservabilityService {
  runner: SystemTaskRunner;
  runs: TaskRunStore;
  /** The schedules of the SPEC system tasks, served as `TOKENS.SystemTaskSchedules`. */
  tasks: SystemTaskDefinitions;
  health: HealthChecker;
  /** The current health of each adapter configuration, served as `TOKENS.AdapterHealth`. */
  states: AdapterHealthStore;
  alerts: StorageAlerts;
  configBackup: ConfigBackup;
  settings: ObservabilitySettings;
  metrics: HoldfastMetrics;
  /** Resolves when storage alert evaluations started so far have settled. */
  idle(): Promise<void>;
}

export const OBSERVABILITY = Symbol.for('holdfast:observability') as InjectionToken<ObservabilityService>;

/** Options of {@link createObservabilityPlugin} (tests shorten timings). */
export interface ObservabilityPluginOptions {
  runner?: Partial<TaskRunnerOptions>;
  /** Bound of one adapter check (default 30 s). */
  healthCheckTimeoutMs?: number;
  /** Node process metrics (`holdfast_process_*`); default true. */
  processMetrics?: boolean;
  /**
   * False: this process never runs system tasks on their schedules (an `api` process of a scale-out installation;
   * the workers do). Run-now through its routes still works. Default true.
   */
  runsScheduledTasks?: boolean;
  /** How often INTEGRITY_CHECK reads the outcome of the check it queued (default 2 s). */
  integrityPollMs?: number;
  /** Environment to read `HOLDFAST_METRICS_TOKEN` and `HOLDFAST_METRICS_ALLOW` from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The observability plugin: runs the system tasks on their schedules (one process per task at a time; the schedules
 * in its `system_task_schedules` table, served to the catalog's export and import as `TOKENS.SystemTaskSchedules`), records
 * adapter health (its `adapter_health` table, served to the catalog as `TOKENS.AdapterHealth`), raises storage alerts from the engine's snapshots, backs the configuration up to a destination,
 * runs scheduled integrity checks through the engine's `TOKENS.IntegrityChecks`, and serves Prometheus metrics.
 * Needs `TOKENS.Database`, `TOKENS.JobCatalog` and the boot's core services; uses `TOKENS.Settings` (system time
 * zone), `TOKENS.AccessPolicy`, `TOKENS.IntegrityChecks`, `TOKENS.ConfigExporter` (the catalog's export), `TOKENS.ExecutionStats`,
 * `TOKENS.StorageUsage` (the engine's snapshots) and `TOKENS.DeliveryStats` when present.
 */
export function createObservabilityPlugin(options: ObservabilityPluginOptions = {}): HoldfastPlugin {
  // Read at creation: a bad value stops the start with a message naming the variable.
  const metricsAccess = metricsAccessFromEnv(options.env ?? process.env);
  let service: ObservabilityService | undefined;
  let observer: HttpLatencyObserver | undefined;
  const pending = new Set<Promise<unknown>>();
  const unsubscribe: Array<() => void> = [];
  let agentPresence: AgentPresenceHealth | undefined;

  const serviceOf = (container: DependencyContainer): ObservabilityService => {
    if (service) return service;
    const base = container.resolve(TOKENS.Logger);
    const logger: KernelLogger = base.child?.({ plugin: 'observability' }) ?? base;
    const database = () => container.resolve(ORM_DATABASE);
    const catalog = () => container.resolve(TOKENS.JobCatalog);
    const registry = () => container.resolve(TOKENS.AdapterRegistry);
    const events = (): EventBus => container.resolve(TOKENS.EventBus);
    const settings = new ObservabilitySettings(database);
    const runs = new TaskRunStore(database);
    const tasks = new SystemTaskDefinitions({
      database,
      settings: () => resolveOptional(container, TOKENS.Settings),
      audit: () => resolveOptional(container, TOKENS.AuditWriter),
      logger,
    });
    const states = new AdapterHealthStore(database);
    const health = new HealthChecker({ container, database, states, catalog, registry, events, thresholds: () => settings.get('health'), logger, timeoutMs: options.healthCheckTimeoutMs });
    const alerts = new StorageAlerts({ database, usage: () => resolveOptional(container, TOKENS.StorageUsage), settings: () => settings.get('storageAlerts'), events, logger });
    const configBackup = new ConfigBackup({ container, catalog, registry, exporter: () => resolveOptional(container, TOKENS.ConfigExporter), events, settings: () => settings.get('configBackup'), logger });
    const metrics = new HoldfastMetrics({
      database,
      catalog: () => resolveOptional(container, TOKENS.JobCatalog),
      health: () => states,
      executions: () => resolveOptional(container, TOKENS.ExecutionStats),
      deliveries: () => resolveOptional(container, TOKENS.DeliveryStats),
      pointInTime: () => resolveOptional(container, TOKENS.PointInTimeStats),
      withProcessMetrics: options.processMetrics,
    });

    const handlers = new Map<string, TaskHandler>([
      [
        'HEALTH_CHECK',
        async (signal) => {
          const outcomes = await health.checkAll(signal);
          const count = (status: string) => outcomes.filter((outcome) => outcome.status === status).length;
          return `checked ${outcomes.length}: ${count('ONLINE')} online, ${count('DEGRADED')} degraded, ${count('OFFLINE')} offline`;
        },
      ],
      [
        'CLEAN_OLD_LOGS',
        async () => {
          const { logRetentionDays } = await settings.get('health');
          const cutoff = new Date(Date.now() - logRetentionDays * 86_400_000);
          const [checks, taskRuns] = [await health.prune(cutoff), await runs.prune(cutoff)];
          return `removed ${checks} health check row(s) and ${taskRuns} task run(s) older than ${logRetentionDays} days`;
        },
      ],
      [
        'UPDATE_DB_VERSIONS',
        async (signal) => {
          const result = await updateDbVersions({ container, database, catalog, registry, logger }, signal);
          const failures = result.failed.map((failure) => `${failure.name}: ${failure.error}`).join('; ');
          return `recorded the version of ${result.recorded} source(s)${result.failed.length ? `; ${result.failed.length} could not be reached (${failures})` : ''}`;
        },
      ],
      [
        'REFRESH_STORAGE_STATS',
        async () => {
          const bus = events();
          if (!bus || bus.listenerCount('storage_stats_refresh') === 0) throw new Error('no storage statistics service is running (engine plugin)');
          await bus.emit('storage_stats_refresh', { reason: 'system-task' });
          return 'storage statistics refreshed';
        },
      ],
      ['CONFIG_BACKUP', (signal) => configBackup.run(signal)],
      [
        INTEGRITY_CHECK_TASK,
        (signal, run) =>
          runIntegrityTask({ port: () => resolveOptional(container, TOKENS.IntegrityChecks), settings: () => settings.get('integrityCheck'), pollMs: options.integrityPollMs ?? 2_000 }, signal, run.trigger),
      ],
    ]);
    const schedules = async (): Promise<TaskSchedule[]> => {
      const rows = await tasks.schedules();
      const backup = await settings.get('configBackup');
      const integrity = await settings.get('integrityCheck');
      return [
        ...rows,
        { task: 'CONFIG_BACKUP', enabled: backup.enabled && backup.storageId !== null, schedule: backup.schedule },
        { task: INTEGRITY_CHECK_TASK, enabled: integrity.enabled, schedule: integrity.schedule },
      ];
    };
    const runner = new SystemTaskRunner(
      { database, settings: () => resolveOptional(container, TOKENS.Settings), schedules, handlers, runs, events, logger },
      { ...DEFAULT_TASK_RUNNER_OPTIONS, ...options.runner },
    );
    service = {
      runner,
      runs,
      tasks,
      health,
      states,
      alerts,
      configBackup,
      settings,
      metrics,
      async idle() {
        while (pending.size > 0) await Promise.allSettled([...pending]);
      },
    };
    return service;
  };
  const track = (work: Promise<unknown>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  return {
    name: 'observability',
    provides: [OBSERVABILITY, TOKENS.AdapterHealth, TOKENS.SystemTaskSchedules],
    requires: [
      ORM_DATABASE,
      TOKENS.AdapterRegistry,
      TOKENS.JobCatalog,
      TOKENS.EventBus,
      TOKENS.Logger,
      optionalToken(TOKENS.Settings),
      optionalToken(TOKENS.AccessPolicy),
      // Changes of the task schedules are audited (identity); without it they go to the log.
      optionalToken(TOKENS.AuditWriter),
      optionalToken(TOKENS.ConfigExporter),
      optionalToken(TOKENS.IntegrityChecks),
      optionalToken(TOKENS.ExecutionStats),
      optionalToken(TOKENS.StorageUsage),
      optionalToken(TOKENS.DeliveryStats),
      optionalToken(TOKENS.PointInTimeStats),
    ],
    entities: [SystemTaskRunEntity, SystemTaskScheduleEntity, HealthCheckLogEntity, ObservabilitySettingEntity, StorageAlertStateEntity],
    migrations: [createObservabilityTables, createAdapterHealthTable, createSystemTaskSchedulesTable],
    register(container) {
      container.register(OBSERVABILITY, { useFactory: serviceOf });
      // The catalog shows the health state in its adapter answers and records connection tests through this port.
      container.register(TOKENS.AdapterHealth, { useFactory: (c) => serviceOf(c).states });
      // The catalog's configuration export and import carry the task schedules through this port.
      container.register(TOKENS.SystemTaskSchedules, { useFactory: (c) => serviceOf(c).tasks });
    },
    routes(container) {
      const of = () => serviceOf(container);
      const built = serviceOf(container);
      return [...systemTaskRoutes(() => of().tasks), ...observabilityRoutes({
        container,
        database: () => container.resolve(ORM_DATABASE),
        runner: () => of().runner,
        runs: built.runs,
        health: () => of().health,
        alerts: () => of().alerts,
        settings: built.settings,
        metrics: () => of().metrics,
        metricsAccess,
      })];
    },
    listen(container) {
      const { alerts, metrics } = serviceOf(container);
      const events = container.resolve(TOKENS.EventBus);
      unsubscribe.push(...metrics.listen(events));
      // Sources bound to an agent get a health entry when it drops or comes back (docs/agents.md "Agent health").
      agentPresence = new AgentPresenceHealth(serviceOf(container).health, container.resolve(TOKENS.Logger));
      unsubscribe.push(...agentPresence.listen(events));
      // Listeners return at once: evaluating alerts must not hold the storage statistics refresh.
      unsubscribe.push(events.on('storage_snapshot', (snapshot) => track(alerts.evaluate(snapshot).catch(() => undefined))));
    },
    async start(container) {
      const { runner, metrics, tasks } = serviceOf(container);
      // Every process seeds (an api process too): the schedule routes list the rows.
      await tasks.seed();
      observer = new HttpLatencyObserver(metrics);
      observer.start();
      if (options.runsScheduledTasks !== false) await runner.start();
    },
    async stop() {
      for (const off of unsubscribe.splice(0)) off();
      await agentPresence?.idle();
      observer?.stop();
      await service?.runner.stop();
      await service?.idle();
    },
  };
}
