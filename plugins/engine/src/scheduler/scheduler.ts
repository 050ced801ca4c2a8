import { randomUUID } from 'node:crypto';
import type { OrmDatabase } from '@holdfast/orm-port';
import type { EventBus, KernelLogger, SettingsReader } from '@holdfast/kernel';
import { CronTime } from 'cron';
import type { RunTrigger } from '../queue/engine.js';
import { isValidSchedule } from './cron-schedule.js';
import type { JobDirectory } from './job-directory.js';
import type { LeaderLock } from './leader-lock.js';
import { WALL_CLOCK, type SchedulerClock } from './scheduler-clock.js';
import type { SlotState } from './slot-state.js';
import { raiseSystemError } from '../run/system-error.js';

/** The trigger of every scheduled run. */
export const SCHEDULER_TRIGGER: RunTrigger = { type: 'Scheduler', label: 'Scheduler' };

/** What became of one job of a fired slot. */
export interface SlotOutcome {
  executionId?: string;
  /** `pending`: its previous scheduled run still waits; `queued`: this slot was queued already; `unknown`: no such job. */
  skipped?: 'pending' | 'queued' | 'unknown';
}

/** Queues runs; the engine is one. */
export interface RunEnqueuer {
  enqueueRun(jobId: string, trigger: RunTrigger): Promise<{ id: string }>;
  /** Queues the runs of one slot at once (see `Engine.enqueueScheduledRuns`). */
  enqueueScheduledRuns(jobIds: string[], trigger: RunTrigger, slot: Date | null): Promise<Map<string, SlotOutcome>>;
}

/** Timings of the scheduler. */
export interface SchedulerOptions {
  /** How often the leader re-reads jobs, presets and the time zone (job changes apply within this). */
  reloadIntervalMs: number;
  /** How often a process that is not the scheduler tries to take the lock. */
  leaderRetryMs: number;
  /**
   * A process that takes the scheduler over queues the slots missed since the previous holder last fired, when that
   * was at most this long ago (scheduler time); older slots are not run.
   */
  catchUpWindowMs: number;
}

/** Defaults: job changes apply within 5 s; a dead scheduler is replaced within 15 s; missed slots of 10 minutes run. */
export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = { reloadIntervalMs: 5_000, leaderRetryMs: 15_000, catchUpWindowMs: 10 * 60_000 };

/** Longest single timer wait, so a changed wall clock or a compressed one is re-read at least this often. */
const MAX_TIMER_WAIT_MS = 60_000;
/** Most slots of one schedule queued by a catch-up (the Pending rule skips most of them anyway). */
const MAX_CATCH_UP_SLOTS = 60;

/** One planned job. */
export interface PlannedJob {
  jobId: string;
  schedule: string;
  timezone: string;
  nextRun: Date | null;
}

/** The jobs sharing one schedule and time zone: one cron computation serves them all. */
interface SlotGroup {
  schedule: string;
  timezone: string;
  cron: CronTime;
  next: Date | null;
  jobIds: Set<string>;
}

/**
 * Runs enabled jobs on their cron schedule (the linked preset's when set) in the system time zone. Exactly one
 * process schedules: the holder of the {@link LeaderLock}; the others retry the lock periodically. Jobs with the same
 * schedule share one slot computation and one timer fires every due slot, whose runs are queued in a few statements
 * however many jobs it holds. A job that still has a Pending scheduled run is not queued again. With a
 * {@link SlotState} (PostgreSQL), the slot each run was queued for is unique per job, and a process that takes over
 * queues the slots that fell due while no process held the scheduler.
 */
export class JobScheduler {
  private readonly groups = new Map<string, SlotGroup>();
  private readonly groupOfJob = new Map<string, string>();
  private readonly warned = new Set<string>();
  private readonly holder = randomUUID();
  private readonly clock: SchedulerClock;
  private reloadTimer: NodeJS.Timeout | undefined;
  private fireTimer: NodeJS.Timeout | undefined;
  private isLeaderNow = false;
  private isStopped = false;
  private lastLeaderAttempt = 0;
  private cycle: Promise<void> | undefined;
  private firing: Promise<void> | undefined;
  private readonly options: SchedulerOptions;

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
      /** Scheduler time (default: the wall clock). */
      clock?: SchedulerClock;
      /** Where the leader records how far it has fired (catch-up after a hand-over); none: no catch-up. */
      state?: SlotState;
    },
    options: Partial<SchedulerOptions> = DEFAULT_SCHEDULER_OPTIONS,
  ) {
    this.options = { ...DEFAULT_SCHEDULER_OPTIONS, ...options };
    this.clock = deps.clock ?? WALL_CLOCK;
  }

  /** True while this process is the scheduler. */
  get isLeader(): boolean {
    return this.isLeaderNow;
  }

  /** Jobs planned in this process with their next slot (scheduler time). */
  plan(): PlannedJob[] {
    return [...this.groupOfJob].map(([jobId, key]) => {
      const group = this.groups.get(key)!;
      return { jobId, schedule: group.schedule, timezone: group.timezone, nextRun: group.next };
    });
  }

  async start(): Promise<void> {
    this.isStopped = false;
    await this.runCycle();
    this.reloadTimer = setInterval(() => void this.runCycle(), this.options.reloadIntervalMs).unref();
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
      let isNewLeader = false;
      if (this.isLeaderNow) {
        this.isLeaderNow = await this.deps.lock.isHeld();
        if (!this.isLeaderNow) this.deps.logger.warn({ reason: this.deps.lock.lostBecause }, 'scheduler: lost the scheduler lock; another process will take over');
      } else if (Date.now() - this.lastLeaderAttempt >= this.options.leaderRetryMs || this.lastLeaderAttempt === 0) {
        this.lastLeaderAttempt = Date.now();
        this.isLeaderNow = await this.deps.lock.tryAcquire();
        isNewLeader = this.isLeaderNow;
        if (this.isLeaderNow) this.deps.logger.info('scheduler: this process is the scheduler');
      }
      if (!this.isLeaderNow) {
        this.clear();
        return;
      }
      await this.reload();
      if (isNewLeader) await this.catchUp();
      else await this.recordProgress();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'scheduler: reloading jobs failed; keeping the current plan');
      raiseSystemError(this.deps.events, 'scheduler', 'The scheduler could not reload jobs', error);
    }
  }

  /** Re-reads jobs and the time zone; plans new jobs, moves jobs whose schedule changed, drops the others. */
  async reload(): Promise<void> {
    const timezone = (await this.deps.settings().get<string>('systemTimezone')) || 'UTC';
    const wanted = new Map<string, string>();
    for (const job of await this.deps.jobs().scheduledJobs()) {
      if (!job.enabled) continue;
      if (!isValidSchedule(job.schedule)) {
        this.warnOnce(job.jobId, job.schedule);
        continue;
      }
      wanted.set(job.jobId, job.schedule);
    }
    for (const [jobId, key] of this.groupOfJob) {
      const group = this.groups.get(key)!;
      if (wanted.get(jobId) === group.schedule && group.timezone === timezone) continue;
      this.unplan(jobId);
    }
    for (const [jobId, schedule] of wanted) {
      if (this.groupOfJob.has(jobId)) continue;
      const key = `${timezone}\n${schedule}`;
      let group = this.groups.get(key);
      if (!group) {
        let cron: CronTime;
        try {
          cron = new CronTime(schedule, timezone);
        } catch {
          this.warnOnce(jobId, schedule);
          continue;
        }
        group = { schedule, timezone, cron, next: this.nextAfter(cron, timezone, this.clock.now()), jobIds: new Set() };
        this.groups.set(key, group);
      }
      group.jobIds.add(jobId);
      this.groupOfJob.set(jobId, key);
    }
    this.arm();
  }

  private warnOnce(jobId: string, schedule: string): void {
    const warning = `${jobId}|${schedule}`;
    if (!this.warned.has(warning)) this.deps.logger.warn({ jobId, schedule }, 'scheduler: job has no valid 5-part schedule; not scheduled');
    this.warned.add(warning);
  }

  private unplan(jobId: string): void {
    const key = this.groupOfJob.get(jobId);
    if (key === undefined) return;
    this.groupOfJob.delete(jobId);
    const group = this.groups.get(key);
    group?.jobIds.delete(jobId);
    if (group && group.jobIds.size === 0) this.groups.delete(key);
  }

  private nextAfter(cron: CronTime, timezone: string, afterMs: number): Date | null {
    try {
      return cron.getNextDateFrom(new Date(afterMs), timezone).toJSDate();
    } catch {
      return null;
    }
  }

  /** Sets the one timer to the earliest next slot (capped, so long waits are re-checked). */
  private arm(): void {
    clearTimeout(this.fireTimer);
    this.fireTimer = undefined;
    if (!this.isLeaderNow || this.isStopped) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const group of this.groups.values()) earliest = Math.min(earliest, group.next?.getTime() ?? Number.POSITIVE_INFINITY);
    if (!Number.isFinite(earliest)) return;
    const wait = Math.min(MAX_TIMER_WAIT_MS, Math.max(0, this.clock.realDelayMs(earliest - this.clock.now())));
    this.fireTimer = setTimeout(() => void this.fireDue(), wait);
    this.fireTimer.unref?.();
  }

  /** Fires every slot that is due, oldest first, then re-arms. */
  private fireDue(): Promise<void> {
    this.firing ??= (async () => {
      const now = this.clock.now();
      const bySlot = new Map<number, string[]>();
      for (const group of this.groups.values()) {
        const slot = group.next?.getTime();
        if (slot === undefined || slot > now) continue;
        bySlot.set(slot, [...(bySlot.get(slot) ?? []), ...group.jobIds]);
        // A late timer (a blocked event loop) runs the slot it was set for once and skips any it overslept.
        group.next = this.nextAfter(group.cron, group.timezone, Math.max(slot, now));
      }
      for (const slot of [...bySlot.keys()].sort((a, b) => a - b)) await this.fireSlot(bySlot.get(slot)!, new Date(slot));
      await this.recordProgress();
    })().finally(() => {
      this.firing = undefined;
      this.arm();
    });
    return this.firing;
  }

  /**
   * A schedule fired for `jobId` (at `slot`, scheduler time; none: outside any slot): queue a run unless one from
   * the scheduler is still Pending or the slot was queued already. Resolves the new execution id, or null.
   */
  async tick(jobId: string, slot?: Date): Promise<string | null> {
    const outcome = (await this.fireSlot([jobId], slot ?? null)).get(jobId);
    return outcome?.executionId !== undefined && outcome.skipped === undefined ? outcome.executionId : null;
  }

  private async fireSlot(jobIds: string[], slot: Date | null): Promise<Map<string, SlotOutcome>> {
    const at = slot?.toISOString() ?? null;
    try {
      const outcomes = await this.deps.enqueue().enqueueScheduledRuns(jobIds, SCHEDULER_TRIGGER, slot);
      let queued = 0;
      for (const [jobId, outcome] of outcomes) {
        if (outcome.skipped === 'pending') this.deps.logger.info({ jobId, slot: at, executionId: outcome.executionId }, 'scheduler: previous scheduled run still pending; not queued again');
        else if (outcome.skipped === 'queued') this.deps.logger.info({ jobId, slot: at }, 'scheduler: slot already queued (by the previous scheduler); not queued again');
        else if (outcome.skipped === 'unknown') this.deps.logger.warn({ jobId, slot: at }, 'scheduler: job no longer exists; not queued');
        else queued += 1;
      }
      this.deps.logger.info({ slot: at, jobs: jobIds.length, queued }, 'scheduler: slot fired');
      return outcomes;
    } catch (error) {
      this.deps.logger.error({ err: error, slot: at, jobs: jobIds.length }, 'scheduler: queueing scheduled runs failed');
      const what = jobIds.length === 1 ? `a run of job ${jobIds[0]}` : `the runs of ${jobIds.length} jobs`;
      raiseSystemError(this.deps.events, 'scheduler', `The scheduler could not queue ${what}`, error);
      return new Map();
    }
  }

  /**
   * After taking the scheduler over: queues the slots between the previous holder's last record and now, when that
   * is within the catch-up window, so a hand-over (a crashed or stopped process) loses no slot.
   */
  private async catchUp(): Promise<void> {
    if (!this.deps.state) return;
    const through = await this.deps.state.read();
    const now = this.clock.now();
    if (through !== null && through < now) {
      if (now - through > this.options.catchUpWindowMs) {
        this.deps.logger.warn({ since: new Date(through).toISOString() }, 'scheduler: no scheduler ran for longer than the catch-up window; the slots missed meanwhile are not run');
      } else {
        const bySlot = new Map<number, string[]>();
        for (const group of this.groups.values()) {
          let at = through;
          for (let i = 0; i < MAX_CATCH_UP_SLOTS; i++) {
            const slot = this.nextAfter(group.cron, group.timezone, at)?.getTime();
            if (slot === undefined || slot > now) break;
            bySlot.set(slot, [...(bySlot.get(slot) ?? []), ...group.jobIds]);
            at = slot;
          }
        }
        if (bySlot.size > 0) this.deps.logger.warn({ slots: bySlot.size, since: new Date(through).toISOString() }, 'scheduler: queueing the slots missed while no process was the scheduler');
        for (const slot of [...bySlot.keys()].sort((a, b) => a - b)) await this.fireSlot(bySlot.get(slot)!, new Date(slot));
      }
    }
    await this.recordProgress();
  }

  /** Records that every slot before the earliest planned one (and not after now) has fired. */
  private async recordProgress(): Promise<void> {
    if (!this.deps.state || !this.isLeaderNow) return;
    let through = this.clock.now();
    for (const group of this.groups.values()) if (group.next) through = Math.min(through, group.next.getTime() - 1);
    await this.deps.state.write(through, this.holder);
  }

  private clear(): void {
    clearTimeout(this.fireTimer);
    this.fireTimer = undefined;
    this.groups.clear();
    this.groupOfJob.clear();
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    clearInterval(this.reloadTimer);
    await this.cycle;
    await this.firing;
    this.clear();
    if (this.isLeaderNow) await this.deps.lock.release();
    this.isLeaderNow = false;
  }
}
