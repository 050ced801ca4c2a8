import { ORM_DATABASE } from '@holdfast/orm-port';
import { TOKENS, type AccessPolicy, type KernelLogger, type RouteDefinition } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import { DashboardFigures } from '../dashboard/dashboard-figures.js';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import { STORAGE_STATS_INTERVAL_MS, StorageStats } from '../dashboard/storage-stats.js';
import type { AdapterFactory } from '../run/adapters.js';
import { CachedJobDirectory, CatalogDirectory } from './job-directory.js';
import { PostgresAdvisoryLock, SingleProcessLock } from './leader-lock.js';
import { DEFAULT_SCHEDULER_OPTIONS, JobScheduler, type RunEnqueuer, type SchedulerOptions } from './scheduler.js';
import { WALL_CLOCK, type SchedulerClock } from './scheduler-clock.js';
import { DatabaseSlotState } from './slot-state.js';
import { historyRoutes } from '../history/history-routes.js';
import { HistoryStore } from '../history/history-store.js';

/** Timings of the scheduler and the storage statistics cache. */
export interface ReportingOptions extends SchedulerOptions {
  storageStatsIntervalMs: number;
  /** False: no scheduler in this process at all (e.g. a CLI that only queues runs, or an `api` process). */
  isSchedulerEnabled: boolean;
  /** False: no storage statistics refresh in this process (an `api` process: workers refresh them). */
  isStorageStatsEnabled: boolean;
  /** Scheduler time (compressed by benchmarks; default the wall clock). */
  clock: SchedulerClock;
}

/** History, dashboard and scheduler of one engine. */
export interface Reporting {
  scheduler: JobScheduler;
  storage: StorageStats;
  routes(): RouteDefinition[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Builds the job scheduler (with its leader lock) and, beside it, the history and dashboard services over the
 * container's database and kernel ports.
 */
export function createReporting(
  container: DependencyContainer,
  enqueuer: () => RunEnqueuer,
  adapters: () => AdapterFactory,
  logger: KernelLogger,
  options: Partial<ReportingOptions> = {},
): Reporting {
  const database = container.resolve(ORM_DATABASE);
  const settings = () => container.resolve(TOKENS.Settings);
  const catalog = () => container.resolve(TOKENS.JobCatalog);
  const jobs = new CatalogDirectory(catalog);
  // History and dashboard read every job per request; they share a list at most 5 s old. The scheduler reads fresh.
  const readerJobs = new CachedJobDirectory(jobs);
  const events = container.resolve(TOKENS.EventBus);
  const access = (): AccessPolicy | undefined => (container.isRegistered(TOKENS.AccessPolicy, true) ? container.resolve(TOKENS.AccessPolicy) : undefined);
  const storage = new StorageStats(database, { jobs: () => jobs, catalog, adapters, logger });
  const lock = database.dialect === 'postgresql' ? new PostgresAdvisoryLock(database) : new SingleProcessLock();
  // Catch-up after a scheduler hand-over only exists where there can be a hand-over: several processes on PostgreSQL.
  const state = database.dialect === 'postgresql' ? new DatabaseSlotState(database) : undefined;
  const scheduler = new JobScheduler(
    { database, jobs: () => jobs, settings, enqueue: enqueuer, lock, logger, events, clock: options.clock ?? WALL_CLOCK, state },
    { ...DEFAULT_SCHEDULER_OPTIONS, ...options },
  );
  return {
    scheduler,
    storage,
    routes: () => [
      ...historyRoutes({ store: new HistoryStore(database), jobs: () => readerJobs, catalog, settings, access }),
      ...dashboardRoutes({ figures: new DashboardFigures(database), storage, jobs: () => readerJobs, settings }),
    ],
    async start() {
      if (options.isStorageStatsEnabled !== false) storage.start(options.storageStatsIntervalMs ?? STORAGE_STATS_INTERVAL_MS, events);
      if (options.isSchedulerEnabled !== false) await scheduler.start();
    },
    async stop() {
      await scheduler.stop();
      await storage.stop();
    },
  };
}
