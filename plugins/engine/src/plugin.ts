import { addExecutionRouting } from './store/agent-routing-migration.js';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { executionStatsPort } from './store/execution-stats.js';
import { storageUsagePort } from './dashboard/storage-usage.js';
import { optionalToken, resolveOptional, TOKENS, type AuditWriter, type HoldfastPlugin, type KernelLogger } from '@holdfast/kernel';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { EngineBackupReader } from './backup-reader/backup-reader.js';
import { buildRecoveryKit } from './codec/recovery-kit.js';
import { Engine } from './queue/engine.js';
import { engineOptionsFrom, type EngineOptions } from './queue/engine-options.js';
import { AdapterFactory } from './run/adapters.js';
import { KeyReservations } from './run/key-reservations.js';
import type { RunServices } from './run/services.js';
import { executionRoutes } from './routes/execution-routes.js';
import { jobRoutes } from './routes/job-run-routes.js';
import { archiveRoutes } from './routes/archive-routes.js';
import { restoreRoutes } from './routes/restore-routes.js';
import { databaseRoutes } from './routes/database-routes.js';
import { verificationRoutes } from './routes/verification-routes.js';
import { TestRestoreScheduler } from './test-restore/test-restore-scheduler.js';
import { integrityChecksPort } from './verify/integrity-port.js';
import { ExecutionEntity, ExecutionLogEntity } from './store/entities.js';
import { ExecutionStore } from './store/execution-store.js';
import { createEngineTables } from './store/migration.js';
import { createScaleOutTables } from './store/scale-out-migration.js';
import { createStorageSnapshotTable } from './dashboard/storage-stats.js';
import { createReporting, type Reporting, type ReportingOptions } from './scheduler/scheduler-wiring.js';
import { runsJobs } from './queue/process-role.js';
import { schedulerOptionsFrom } from './scheduler/scheduler-env.js';
import { createChangeLogTables } from './pitr/change-log-tables.js';
import { pointInTimeStatsPort } from './pitr/pitr-gauges.js';
import { addChangeLogStreamGauges } from './pitr/pitr-gauges-tables.js';
import { ChangeLogStore } from './pitr/change-log-store.js';
import { ChangeLogSupervisor, DEFAULT_SUPERVISOR_OPTIONS, type SupervisorOptions } from './pitr/change-log-supervisor.js';
import { PostgresJobLeases, SingleProcessLeases } from './pitr/job-leases.js';
import { pointInTimeOverviewRoutes } from './pitr/point-in-time-overview-route.js';
import { pointInTimeRoutes } from './pitr/point-in-time-route.js';
import { pointInTimeRestoreRoutes } from './pitr/point-in-time-restore-route.js';

/** The engine's service in the container: queue runs (scheduler, CLI), restores, cancellations. */
export const ENGINE = Symbol.for('holdfast:engine') as InjectionToken<Engine>;

/** Options of {@link createEnginePlugin}. */
export interface EnginePluginOptions {
  /** Environment read for `HOLDFAST_ENGINE_*` timings (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Timings that win over the environment (tests). */
  timings?: Partial<EngineOptions>;
  /** Scheduler and storage statistics timings (tests). */
  reporting?: Partial<ReportingOptions>;
  /** Change-log archiving (point-in-time recovery) timings (tests); `false` runs no archivers in this process. */
  pointInTime?: Partial<SupervisorOptions> | false;
}

/**
 * The engine plugin: execution rows, the FIFO queue, backup and restore runs, cancellation, and their routes.
 * Needs `TOKENS.Database`, `TOKENS.JobCatalog`, `TOKENS.Settings` and the boot's core services; uses
 * `TOKENS.AuditWriter` when registered. Registers {@link ENGINE}.
 */
export function createEnginePlugin(options: EnginePluginOptions = {}): HoldfastPlugin {
  const env = options.env ?? process.env;
  const timings = engineOptionsFrom(env, options.timings);
  // An `api` process schedules nothing and refreshes no statistics: the workers do.
  const isWorker = runsJobs(timings.role);
  const reportingOptions: Partial<ReportingOptions> = {
    ...schedulerOptionsFrom(env),
    ...(isWorker ? {} : { isSchedulerEnabled: false, isStorageStatsEnabled: false }),
    ...options.reporting,
  };
  let engine: Engine | undefined;
  let store: ExecutionStore | undefined;
  const storeOf = (container: DependencyContainer) => (store ??= new ExecutionStore(container.resolve(ORM_DATABASE)));
  const loggerOf = (container: DependencyContainer): KernelLogger => {
    const logger = container.resolve(TOKENS.Logger);
    return logger.child?.({ plugin: 'engine' }) ?? logger;
  };
  const adaptersOf = (container: DependencyContainer) => new AdapterFactory(container, container.resolve(TOKENS.AdapterRegistry), loggerOf(container));
  const engineOf = (container: DependencyContainer): Engine => {
    if (engine) return engine;
    const logger = loggerOf(container);
    const services: RunServices = {
      get catalog() {
        return container.resolve(TOKENS.JobCatalog);
      },
      get settings() {
        return container.resolve(TOKENS.Settings);
      },
      adapters: adaptersOf(container),
      keys: new KeyReservations((executionId, configIds, pick) => storeOf(container).reserveTarget(executionId, configIds, pick)),
      events: container.resolve(TOKENS.EventBus),
      logger,
      version: container.resolve(TOKENS.RuntimeConfig).version,
    };
    engine = new Engine(storeOf(container), services, timings, logger);
    return engine;
  };
  let testRestores: TestRestoreScheduler | undefined;
  let changeLogs: ChangeLogSupervisor | undefined;
  const changeLogStoreOf = (container: DependencyContainer) => new ChangeLogStore(container.resolve(ORM_DATABASE));
  let reporting: Reporting | undefined;
  const reportingOf = (container: DependencyContainer) => (reporting ??= createReporting(container, () => engineOf(container), () => adaptersOf(container), loggerOf(container), reportingOptions));
  const audit = (container: DependencyContainer) => (): AuditWriter | undefined => resolveOptional(container, TOKENS.AuditWriter);

  return {
    name: 'engine',
    provides: [ENGINE, TOKENS.RecoveryKitBuilder, TOKENS.BackupReader, TOKENS.IntegrityChecks, TOKENS.ExecutionStats, TOKENS.StorageUsage, TOKENS.PointInTimeStats],
    requires: [
      ORM_DATABASE,
      TOKENS.AdapterRegistry,
      TOKENS.JobCatalog,
      TOKENS.Settings,
      TOKENS.EventBus,
      TOKENS.Logger,
      TOKENS.RuntimeConfig,
      optionalToken(TOKENS.AccessPolicy),
      optionalToken(TOKENS.AuditWriter),
      optionalToken(TOKENS.LocalPathPolicy),
    ],
    entities: [ExecutionEntity, ExecutionLogEntity],
    migrations: [createEngineTables, createStorageSnapshotTable, createScaleOutTables, createChangeLogTables, addChangeLogStreamGauges, addExecutionRouting],
    register(container) {
      container.register(ENGINE, { useFactory: engineOf });
      container.register(TOKENS.RecoveryKitBuilder, { useValue: buildRecoveryKit });
      container.register(TOKENS.BackupReader, { useValue: new EngineBackupReader(() => container.resolve(TOKENS.JobCatalog), () => adaptersOf(container)) });
      container.register(TOKENS.IntegrityChecks, { useFactory: (c) => integrityChecksPort(() => engineOf(c), () => storeOf(c)) });
      // Observability's metrics read queue and history figures through this port, never the executions table.
      container.register(TOKENS.ExecutionStats, { useValue: executionStatsPort(() => container.resolve(ORM_DATABASE)) });
      // Its storage alerts and usage route read the storage snapshots through this one, never the table.
      container.register(TOKENS.StorageUsage, { useValue: storageUsagePort(() => container.resolve(ORM_DATABASE)) });
      // And the point-in-time gauges read the change-log archive through this one.
      container.register(TOKENS.PointInTimeStats, { useValue: pointInTimeStatsPort({ store: () => changeLogStoreOf(container), catalog: () => container.resolve(TOKENS.JobCatalog) }) });
    },
    routes(container) {
      const running = engineOf(container);
      const catalog = () => container.resolve(TOKENS.JobCatalog);
      return [
        ...jobRoutes({ engine: running, catalog, settings: () => container.resolve(TOKENS.Settings), audit: audit(container), adapters: () => adaptersOf(container) }),
        ...executionRoutes(storeOf(container), running, catalog),
        ...restoreRoutes(running, catalog, audit(container), () => adaptersOf(container)),
        ...databaseRoutes(catalog, () => adaptersOf(container)),
        ...archiveRoutes(catalog, () => adaptersOf(container)),
        ...verificationRoutes({ engine: running, store: storeOf(container), catalog, audit: audit(container) }),
        ...pointInTimeRoutes({ catalog, adapters: () => adaptersOf(container), store: () => changeLogStoreOf(container) }),
        ...pointInTimeOverviewRoutes({ stats: () => container.resolve(TOKENS.PointInTimeStats), access: () => resolveOptional(container, TOKENS.AccessPolicy) }),
        ...pointInTimeRestoreRoutes(running, {
          catalog,
          adapters: () => adaptersOf(container),
          store: () => changeLogStoreOf(container),
          localPaths: () => resolveOptional(container, TOKENS.LocalPathPolicy),
          audit: audit(container),
          access: () => resolveOptional(container, TOKENS.AccessPolicy),
        }),
        ...reportingOf(container).routes(),
      ];
    },
    start: async (container) => {
      await engineOf(container).start();
      await reportingOf(container).start();
      if (!isWorker) return;
      testRestores = new TestRestoreScheduler(
        {
          catalog: () => container.resolve(TOKENS.JobCatalog),
          settings: () => container.resolve(TOKENS.Settings),
          store: storeOf(container),
          enqueue: (jobId, trigger) => engineOf(container).enqueueTestRestore(jobId, trigger),
          isLeader: () => reportingOf(container).scheduler.isLeader,
          logger: loggerOf(container),
          events: container.resolve(TOKENS.EventBus),
        },
        options.reporting?.reloadIntervalMs,
      );
      await testRestores.start();
      if (options.pointInTime !== false) {
        // One process streams each point-in-time job: a per-job lease (an advisory lock on PostgreSQL).
        const database = container.resolve(ORM_DATABASE);
        changeLogs = new ChangeLogSupervisor(
          {
            catalog: () => container.resolve(TOKENS.JobCatalog),
            adapters: () => adaptersOf(container),
            store: changeLogStoreOf(container),
            leases: database.dialect === 'postgresql' ? new PostgresJobLeases(database) : new SingleProcessLeases(),
            events: container.resolve(TOKENS.EventBus),
            logger: loggerOf(container),
            settings: () => resolveOptional(container, TOKENS.Settings),
            dataDir: container.resolve(TOKENS.RuntimeConfig).dataDir,
            processId: engineOf(container).processId,
          },
          { ...DEFAULT_SUPERVISOR_OPTIONS, ...options.pointInTime },
        );
        changeLogs.start();
      }
    },
    stop: async () => {
      await changeLogs?.stop();
      await testRestores?.stop();
      await reporting?.stop();
      await engine?.stop();
    },
  };
}
