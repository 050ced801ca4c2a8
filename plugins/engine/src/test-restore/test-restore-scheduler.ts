import type { EventBus, JobCatalog, KernelLogger, SettingsReader } from '@holdfast/kernel';
import { CronJob } from 'cron';
import type { RunTrigger } from '../queue/engine.js';
import { raiseSystemError } from '../run/system-error.js';
import { isValidSchedule } from '../scheduler/cron-schedule.js';
import { SCHEDULER_TRIGGER } from '../scheduler/scheduler.js';
import { ExecutionEntity } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';

/** What the test restore scheduler needs. */
export interface TestRestoreSchedulerDeps {
  catalog: () => JobCatalog;
  settings: () => SettingsReader;
  store: ExecutionStore;
  enqueue: (jobId: string, trigger: RunTrigger) => Promise<{ id: string }>;
  /** True while this process is the scheduler (the job scheduler's leader lock): only one process queues. */
  isLeader: () => boolean;
  logger: KernelLogger;
  events?: EventBus;
}

/**
 * Queues test restores on each job's own `testRestore.schedule` (system time zone). It follows the job scheduler's
 * leadership instead of taking a lock of its own, re-reads the schedules on the same kind of poll, and skips a firing
 * while the job still has a test restore Pending.
 */
export class TestRestoreScheduler {
  private readonly planned = new Map<string, { schedule: string; timezone: string; cron: CronJob }>();
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;

  constructor(
    private readonly deps: TestRestoreSchedulerDeps,
    private readonly reloadIntervalMs = 5_000,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload(), this.reloadIntervalMs).unref();
  }

  /** Jobs with a live test restore timer here. */
  plan(): Array<{ jobId: string; schedule: string; nextRun: Date | null }> {
    return [...this.planned].map(([jobId, entry]) => ({ jobId, schedule: entry.schedule, nextRun: entry.cron.nextDate()?.toJSDate() ?? null }));
  }

  reload(): Promise<void> {
    this.reloading ??= this.reloadOnce().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private async reloadOnce(): Promise<void> {
    try {
      const wanted = new Map<string, string>();
      if (this.deps.isLeader()) {
        for (const job of await this.deps.catalog().listJobs()) {
          if (job.enabled && job.testRestoreSchedule && isValidSchedule(job.testRestoreSchedule)) wanted.set(job.id, job.testRestoreSchedule);
        }
      }
      const timezone = (await this.deps.settings().get<string>('systemTimezone')) || 'UTC';
      for (const [jobId, entry] of this.planned) {
        if (wanted.get(jobId) === entry.schedule && entry.timezone === timezone) continue;
        void entry.cron.stop();
        this.planned.delete(jobId);
      }
      for (const [jobId, schedule] of wanted) {
        if (this.planned.has(jobId)) continue;
        this.planned.set(jobId, { schedule, timezone, cron: CronJob.from({ cronTime: schedule, timeZone: timezone, start: true, onTick: () => void this.tick(jobId) }) });
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, 'test restore scheduler: reloading schedules failed; keeping the current plan');
      raiseSystemError(this.deps.events, 'test-restore-scheduler', 'The test restore scheduler could not reload jobs', error);
    }
  }

  /** A test restore schedule fired: queue one unless the job still has one Pending. Resolves the execution id or null. */
  async tick(jobId: string): Promise<string | null> {
    try {
      const waiting = await this.deps.store.em().count(ExecutionEntity, { jobId, type: 'Restore', status: 'Pending' });
      if (waiting > 0) {
        this.deps.logger.info({ jobId }, 'test restore scheduler: a test restore of this job is still pending; not queued again');
        return null;
      }
      return (await this.deps.enqueue(jobId, SCHEDULER_TRIGGER)).id;
    } catch (error) {
      this.deps.logger.error({ err: error, jobId }, 'test restore scheduler: queueing a test restore failed');
      raiseSystemError(this.deps.events, 'test-restore-scheduler', `The scheduler could not queue a test restore of job ${jobId}`, error);
      return null;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reloading;
    for (const entry of this.planned.values()) void entry.cron.stop();
    this.planned.clear();
  }
}
