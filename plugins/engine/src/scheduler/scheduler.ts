import type { OrmDatabase } from '@holdfast/orm-port';
import type { EventBus, KernelLogger, SettingsReader } from '@holdfast/kernel';
import { CronJob } from 'cron';
import type { RunTrigger } from '../queue/engine.js';
import { isValidSchedule } from './cron-schedule.js';
import type { JobDirectory } from './job-directory.js';
import type { LeaderLock } from './leader-lock.js';
import { raiseSystemError } from '../run/system-error.js';

/** The trigger of every scheduled run. */
export const SCHEDULER_TRIGGER: RunTrigger = { type: 'Scheduler', label: 'Scheduler' };

/** Queues a run; the engine's `enqueueRun` is one. */
export interface RunEnqueuer {
  enqueueRun(jobId: string, trigger: RunTrigger): Promise<{ id: string }>;
}

/** Timings of the scheduler. */
export interface SchedulerOptions {
  /** How often the leader re-reads jobs, presets and the time zone (job changes apply within this). */
  reloadIntervalMs: number;
  /** How often a process that is not the scheduler tries to take the lock. */
  leaderRetryMs: number;
}

/** Defaults: job changes apply within 5 s; a dead scheduler is replaced within 15 s. */
export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = { reloadIntervalMs: 5_000, leaderRetryMs: 15_000 };

/** One planned job. */
export interface PlannedJob {
  jobId: string;
  schedule: string;
  timezone: string;
  nextRun: Date | null;
}

interface Planned {
  schedule: string;
  timezone: string;
  cron: CronJob;
}

/**
 * Runs enabled jobs on their cron schedule (the linked preset's when set) in the system time zone. Exactly one
 * process schedules: the holder of the {@link LeaderLock}; the others retry the lock periodically. A job that still
 * has a Pending scheduled run is not queued again.
 */
export class JobScheduler {
  private readonly planned = new Map<string, Planned>();
  private readonly warned = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private isLeaderNow = false;
  private isStopped = false;
  private lastLeaderAttempt = 0;
  private cycle: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      database: OrmDatabase;
      jobs: () => JobDirectory;
      settings: () => SettingsReader;
      enqueue: () => RunEnqueuer;
      lock: LeaderLock;
      logger: KernelLogger;
      /** Raises `system_error` on unexpected failures. */
      events?: EventBus;
    },
    private readonly options: SchedulerOptions = DEFAULT_SCHEDULER_OPTIONS,
  ) {}

  /** True while this process is the scheduler. */
  get isLeader(): boolean {
    return this.isLeaderNow;
  }

  /** Jobs with a live cron timer in this process. */
  plan(): PlannedJob[] {
    return [...this.planned].map(([jobId, entry]) => ({
      jobId,
      schedule: entry.schedule,
      timezone: entry.timezone,
      nextRun: entry.cron.nextDate()?.toJSDate() ?? null,
    }));
  }

  async start(): Promise<void> {
    this.isStopped = false;
    await this.runCycle();
    this.timer = setInterval(() => void this.runCycle(), this.options.reloadIntervalMs).unref();
  }

  /** One pass: keep or take leadership, then reload the plan (or drop it when not the leader). */
  runCycle(): Promise<void> {
    this.cycle ??= this.cycleOnce().finally(() => {
      this.cycle = undefined;
    });
    return this.cycle;
  }

  private async cycleOnce(): Promise<void> {
    try {
      if (this.isStopped) return;
      if (this.isLeaderNow) {
        this.isLeaderNow = await this.deps.lock.isHeld();
        if (!this.isLeaderNow) this.deps.logger.warn('scheduler: lost the scheduler lock; another process will take over');
      } else if (Date.now() - this.lastLeaderAttempt >= this.options.leaderRetryMs || this.lastLeaderAttempt === 0) {
        this.lastLeaderAttempt = Date.now();
        this.isLeaderNow = await this.deps.lock.tryAcquire();
        if (this.isLeaderNow) this.deps.logger.info('scheduler: this process is the scheduler');
      }
      if (this.isLeaderNow) await this.reload();
      else this.clear();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'scheduler: reloading jobs failed; keeping the current plan');
      raiseSystemError(this.deps.events, 'scheduler', 'The scheduler could not reload jobs', error);
    }
  }

  /** Re-reads jobs and the time zone; starts, replaces or stops cron timers whose schedule changed. */
  async reload(): Promise<void> {
    const timezone = (await this.deps.settings().get<string>('systemTimezone')) || 'UTC';
    const wanted = new Map<string, string>();
    for (const job of await this.deps.jobs().scheduledJobs()) {
      if (!job.enabled) continue;
      if (!isValidSchedule(job.schedule)) {
        const warning = `${job.jobId}|${job.schedule}`;
        if (!this.warned.has(warning)) this.deps.logger.warn({ jobId: job.jobId, schedule: job.schedule }, 'scheduler: job has no valid 5-part schedule; not scheduled');
        this.warned.add(warning);
        continue;
      }
      wanted.set(job.jobId, job.schedule);
    }
    for (const [jobId, entry] of this.planned) {
      if (wanted.get(jobId) !== entry.schedule || entry.timezone !== timezone) {
        void entry.cron.stop();
        this.planned.delete(jobId);
      }
    }
    for (const [jobId, schedule] of wanted) {
      if (this.planned.has(jobId)) continue;
      const cron = CronJob.from({ cronTime: schedule, timeZone: timezone, start: true, onTick: () => void this.tick(jobId) });
      this.planned.set(jobId, { schedule, timezone, cron });
    }
  }

  /**
   * A schedule fired for `jobId`: queue a run unless one from the scheduler is still Pending. Resolves the new
   * execution id, or null when it was skipped.
   */
  async tick(jobId: string): Promise<string | null> {
    try {
      const knex = this.deps.database.em().getKnex();
      const waiting = await knex('executions').select('id').where({ job_id: jobId, status: 'Pending', trigger_type: 'Scheduler' }).first();
      if (waiting) {
        this.deps.logger.info({ jobId, executionId: waiting.id }, 'scheduler: previous scheduled run still pending; not queued again');
        return null;
      }
      const execution = await this.deps.enqueue().enqueueRun(jobId, SCHEDULER_TRIGGER);
      return execution.id;
    } catch (error) {
      this.deps.logger.error({ err: error, jobId }, 'scheduler: queueing a scheduled run failed');
      raiseSystemError(this.deps.events, 'scheduler', `The scheduler could not queue a run of job ${jobId}`, error);
      return null;
    }
  }

  private clear(): void {
    for (const entry of this.planned.values()) void entry.cron.stop();
    this.planned.clear();
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    clearInterval(this.timer);
    await this.cycle;
    this.clear();
    if (this.isLeaderNow) await this.deps.lock.release();
    this.isLeaderNow = false;
  }
}
