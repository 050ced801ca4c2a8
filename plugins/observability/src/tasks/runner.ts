import type { OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, type EventBus, type KernelLogger, type SettingsReader } from '@holdfast/kernel';
import { CronJob, CronTime } from 'cron';
import { SystemTaskScheduleEntity } from '../store/entities.js';
import { TaskLease } from './lease.js';
import type { TaskRunStore, TaskRunView } from './run-store.js';

/** What a task does; resolves a short message for the run record, throws on failure. */
export type TaskHandler = (signal: AbortSignal, run: { trigger: 'Scheduler' | 'Manual' }) => Promise<string>;

/** A task's schedule as the runner sees it. */
export interface TaskSchedule {
  task: string;
  enabled: boolean;
  schedule: string;
}

/** Timings of the runner (tests shorten them). */
export interface TaskRunnerOptions {
  /** How often schedules are re-read (task changes apply within this). */
  reloadIntervalMs: number;
  /** Lease length; a running task renews it every third of it. */
  leaseMs: number;
}

export const DEFAULT_TASK_RUNNER_OPTIONS: TaskRunnerOptions = { reloadIntervalMs: 10_000, leaseMs: 5 * 60_000 };

interface Planned {
  schedule: string;
  timezone: string;
  cron: CronJob;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Fires every enabled system task on its cron (system time zone), runs tasks on demand, records each run and keeps
 * a task to one process at a time through {@link TaskLease}. Every process plans the crons; the lease decides who
 * runs a slot. An unexpected failure of a task raises `system_error`.
 */
export class SystemTaskRunner {
  private readonly planned = new Map<string, Planned>();
  private readonly active = new Map<string, Promise<TaskRunView>>();
  private readonly controller = new AbortController();
  private readonly lease: TaskLease;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private isStopped = true;

  constructor(
    private readonly deps: {
      database: () => OrmDatabase;
      settings: () => SettingsReader | undefined;
      /** Every task with its schedule (`system_task_schedules` plus the runner's own, such as CONFIG_BACKUP). */
      schedules: () => Promise<TaskSchedule[]>;
      handlers: ReadonlyMap<string, TaskHandler>;
      runs: TaskRunStore;
      events: () => EventBus | undefined;
      logger: KernelLogger;
    },
    private readonly options: TaskRunnerOptions = DEFAULT_TASK_RUNNER_OPTIONS,
  ) {
    this.lease = new TaskLease(deps.database, `${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  /** Known task names. */
  tasks(): string[] {
    return [...this.deps.handlers.keys()];
  }

  async start(): Promise<void> {
    this.isStopped = false;
    await this.reload();
    this.timer = setInterval(() => void this.reload(), this.options.reloadIntervalMs).unref();
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    clearInterval(this.timer);
    await this.reloading;
    for (const entry of this.planned.values()) void entry.cron.stop();
    this.planned.clear();
    this.controller.abort();
    await Promise.allSettled([...this.active.values()]);
  }

  /** Cron timers of this process (diagnostics and tests). */
  plan(): Array<{ task: string; schedule: string; timezone: string; nextRun: Date | null }> {
    return [...this.planned].map(([task, entry]) => ({ task, schedule: entry.schedule, timezone: entry.timezone, nextRun: entry.cron.nextDate()?.toJSDate() ?? null }));
  }

  /** Re-reads schedules and the time zone; starts, replaces or stops cron timers. */
  reload(): Promise<void> {
    this.reloading ??= this.reloadOnce().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async reloadOnce(): Promise<void> {
    if (this.isStopped) return;
    try {
      const timezone = (await this.deps.settings()?.get<string>('systemTimezone')) || 'UTC';
      const wanted = new Map<string, string>();
      for (const entry of await this.deps.schedules()) {
        if (!entry.enabled || !this.deps.handlers.has(entry.task)) continue;
        if (!isValidCron(entry.schedule, timezone)) {
          this.deps.logger.warn({ task: entry.task, schedule: entry.schedule }, 'system task has an invalid schedule; not scheduled');
          continue;
        }
        wanted.set(entry.task, entry.schedule);
      }
      for (const [task, entry] of this.planned) {
        if (wanted.get(task) !== entry.schedule || entry.timezone !== timezone) {
          void entry.cron.stop();
          this.planned.delete(task);
        }
      }
      for (const [task, schedule] of wanted) {
        if (this.planned.has(task) || this.isStopped) continue;
        const cron = CronJob.from({ cronTime: schedule, timeZone: timezone, start: true, onTick: () => void this.tick(task) });
        this.planned.set(task, { schedule, timezone, cron });
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, 'system tasks: reloading schedules failed; keeping the current plan');
    }
  }

  /** A cron fired: run the task for this minute's slot unless another process claimed the slot. */
  async tick(task: string): Promise<TaskRunView | null> {
    const slot = Math.floor(Date.now() / 60_000) * 60_000;
    try {
      if (!(await this.lease.acquire(task, this.options.leaseMs, slot))) return null;
      return await this.runLeased(task, 'Scheduler');
    } catch (error) {
      await this.raise(task, error);
      return null;
    }
  }

  /**
   * Run-now: starts the task at once and resolves its run record (status `Running`) plus the completion promise.
   * 409 while the task runs anywhere (this or another process).
   */
  async runNow(task: string): Promise<{ run: TaskRunView; done: Promise<TaskRunView> }> {
    if (!this.deps.handlers.has(task)) throw new NotFoundError(`System task ${task} not found`);
    if (this.active.has(task) || !(await this.lease.acquire(task, this.options.leaseMs))) {
      throw new ConflictError(`System task ${task} is already running`);
    }
    let resolveStarted!: (run: TaskRunView) => void;
    const started = new Promise<TaskRunView>((resolve) => (resolveStarted = resolve));
    const done = this.runLeased(task, 'Manual', resolveStarted);
    const run = await Promise.race([started, done]);
    return { run, done };
  }

  /** Resolves when `task` (if it is running in this process) has finished. */
  async idle(task?: string): Promise<void> {
    const running = task ? [this.active.get(task)] : [...this.active.values()];
    await Promise.allSettled(running.filter(Boolean));
  }

  private runLeased(task: string, trigger: TaskRunView['trigger'], onStarted?: (run: TaskRunView) => void): Promise<TaskRunView> {
    const work = this.execute(task, trigger, onStarted).finally(() => {
      this.active.delete(task);
    });
    this.active.set(task, work);
    return work;
  }

  private async execute(task: string, trigger: TaskRunView['trigger'], onStarted?: (run: TaskRunView) => void): Promise<TaskRunView> {
    const renew = setInterval(() => {
      void this.lease.renew(task, this.options.leaseMs).catch((error: unknown) => this.deps.logger.warn({ err: error, task }, 'system task: renewing the lease failed'));
    }, Math.max(1_000, Math.floor(this.options.leaseMs / 3))).unref();
    let run: TaskRunView | undefined;
    try {
      run = await this.deps.runs.begin(task, trigger);
      onStarted?.(run);
      let status: 'Success' | 'Failed' = 'Success';
      let message: string;
      try {
        message = await this.deps.handlers.get(task)!(this.controller.signal, { trigger });
      } catch (error) {
        status = 'Failed';
        message = errorText(error);
        await this.raise(task, error);
      }
      const finished = (await this.deps.runs.finish(run.id, status, message)) ?? run;
      await this.markRun(task).catch((error: unknown) => this.deps.logger.warn({ err: error, task }, 'system task: updating last run failed'));
      return finished;
    } finally {
      clearInterval(renew);
      await this.lease.release(task).catch((error: unknown) => this.deps.logger.warn({ err: error, task }, 'system task: releasing the lease failed'));
    }
  }

  /** `lastRunAt`/`nextRunAt` of the task's schedule row (absent for the runner's own tasks). */
  private async markRun(task: string): Promise<void> {
    const next = this.planned.get(task)?.cron.nextDate()?.toJSDate() ?? null;
    await this.deps
      .database()
      .em()
      .nativeUpdate(SystemTaskScheduleEntity, { task }, { lastRunAt: new Date(), ...(next ? { nextRunAt: next } : {}) });
  }

  private async raise(task: string, error: unknown): Promise<void> {
    this.deps.logger.error({ err: error, task }, 'system task failed');
    await this.deps
      .events()
      ?.emit('system_error', { message: `System task ${task} failed`, source: `system-task:${task}`, error: errorText(error) })
      .catch(() => undefined);
  }
}

/** True for a cron expression the `cron` package accepts in `timezone`. */
export function isValidCron(schedule: string, timezone = 'UTC'): boolean {
  try {
    new CronTime(schedule, timezone);
    return schedule.trim().split(/\s+/).length === 5;
  } catch {
    return false;
  }
}
