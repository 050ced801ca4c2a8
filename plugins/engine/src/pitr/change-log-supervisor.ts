import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { EventBus, JobCatalog, KernelLogger, ResolvedAdapterConfig, RunPlan, SettingsReader } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import { runChangeLogArchiver, type RetryPolicy } from './change-log-archiver.js';
import type { ChangeLogStore, StreamState } from './change-log-store.js';
import type { JobLeases } from './job-leases.js';
import { emitPitrEvent } from './pitr-events.js';

/** Timings of the supervisor; production defaults, shortened by tests. */
export interface SupervisorOptions {
  /** How often jobs are re-read (created, changed, disabled, deleted jobs are picked up) and streams restarted (ms). */
  reloadIntervalMs: number;
  /** How often the leases are checked; a lost lease stops its archiver (ms). */
  leaseCheckMs: number;
  /** Handed to the source: how often the segment being written is archived as a partial (ms). */
  flushIntervalMs: number;
  retry: RetryPolicy;
}

export const DEFAULT_SUPERVISOR_OPTIONS: SupervisorOptions = {
  reloadIntervalMs: 15_000,
  leaseCheckMs: 5_000,
  flushIntervalMs: 10_000,
  retry: { firstMs: 2_000, maxMs: 5 * 60_000 },
};

/** What the supervisor needs from the engine. */
export interface SupervisorDeps {
  catalog: () => JobCatalog;
  adapters: () => AdapterFactory;
  store: ChangeLogStore;
  leases: JobLeases;
  events: EventBus | undefined;
  logger: KernelLogger;
  /** The settings (the lag alert threshold); absent: defaults. */
  settings?: () => SettingsReader | undefined;
  /** The data directory: spools live in `<dataDir>/pitr-spool/<job id>`. */
  dataDir: string;
  processId: string;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
  fingerprint: string;
  /** The source as the archiver streamed from it: its slot is dropped through this config once the job is gone. */
  source: ResolvedAdapterConfig;
  since: Date;
  state: 'streaming' | 'retrying';
  lastError: string | null;
}

/** What one pass learnt of the jobs: those to stream, and those that no longer need a slot. */
interface JobsSeen {
  wanted: Map<string, { fingerprint: string; source: ResolvedAdapterConfig }>;
  /** Every job id the catalog lists (enabled or not). */
  listed: Set<string>;
  /** Jobs that resolved and whose source is not (or no longer) set up for point-in-time recovery. */
  notPointInTime: Set<string>;
}

/**
 * Runs one change-log archiver per enabled job whose source offers point-in-time recovery, on the one process that
 * holds the job's lease. Every pass re-reads the jobs: a new job starts streaming, a disabled, deleted or changed one
 * (source, destinations, codec or encryption) stops (and a changed one restarts with its new settings); an archiver
 * that failed is started again on the next pass, resuming from the spool and the source's slot.
 *
 * A deleted job, or one whose source left point-in-time mode, also loses its replication slot
 * (`dropChangeLogStream`): a slot nobody reads would hold WAL on the database server forever. A disabled job keeps
 * its slot (and so keeps WAL on the server: `max_slot_wal_keep_size` bounds it, docs/pitr.md), so enabling it again
 * resumes without a gap.
 */
export class ChangeLogSupervisor {
  private readonly running = new Map<string, Running>();
  private timers: NodeJS.Timeout[] = [];
  private pass: Promise<void> | undefined;
  private isStopped = false;

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: SupervisorOptions = DEFAULT_SUPERVISOR_OPTIONS,
  ) {}

  /** Jobs this process streams now. */
  get streamingJobs(): string[] {
    return [...this.running.keys()];
  }

  start(): void {
    this.deps.leases.onLost((reason) => {
      for (const [jobId, run] of this.running) {
        this.deps.logger.warn({ jobId }, `change-log archiving stopped: ${reason}`);
        run.controller.abort(new Error(reason));
      }
    });
    void this.reconcile();
    this.timers = [
      setInterval(() => void this.reconcile(), this.options.reloadIntervalMs),
      setInterval(() => void this.checkLeases(), this.options.leaseCheckMs),
    ];
    for (const timer of this.timers) timer.unref();
  }

  /** One pass (passes never overlap; a call during a pass waits for it). */
  reconcile(): Promise<void> {
    if (this.isStopped) return Promise.resolve();
    this.pass ??= this.reconcileOnce()
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'change-log supervisor pass failed'))
      .finally(() => (this.pass = undefined));
    return this.pass;
  }

  private async reconcileOnce(): Promise<void> {
    const seen = await this.seeJobs();
    const { wanted } = seen;
    for (const [jobId, run] of [...this.running]) {
      const fingerprint = wanted.get(jobId)?.fingerprint;
      if (fingerprint === run.fingerprint) continue;
      this.deps.logger.info({ jobId }, fingerprint ? 'change-log archiving restarts: the job changed' : 'change-log archiving stops: the job is gone, disabled or no longer point-in-time');
      await this.stopJob(jobId);
      if (!fingerprint && isSlotUnwanted(seen, jobId)) await this.dropSlot(jobId, run.source);
    }
    await this.dropSlotsOfGoneJobs(seen);
    for (const [jobId, { fingerprint, source }] of wanted) {
      if (this.isStopped) return;
      const running = this.running.get(jobId);
      if (running) {
        // Refreshes the row's time, so readers can tell a live stream from one whose process died.
        await this.record(jobId, running.since, running.state, running.lastError);
        continue;
      }
      if (!(await this.deps.leases.tryAcquire(jobId).catch(() => false))) continue;
      this.startJob(jobId, fingerprint, source);
    }
  }

  /**
   * Enabled point-in-time jobs and a fingerprint of what their archiver depends on; which jobs exist; which resolved
   * without point-in-time. A job that fails to resolve keeps its current state.
   */
  private async seeJobs(): Promise<JobsSeen> {
    const seen: JobsSeen = { wanted: new Map(), listed: new Set(), notPointInTime: new Set() };
    const { wanted } = seen;
    for (const job of await this.deps.catalog().listJobs()) {
      seen.listed.add(job.id);
      if (!job.enabled) continue;
      try {
        const plan = await this.deps.catalog().resolveRunPlan(job.id);
        const source = this.deps.adapters().source(plan.source);
        try {
          if (source.pointInTime?.()) wanted.set(job.id, { fingerprint: fingerprintOf(plan), source: plan.source });
          else seen.notPointInTime.add(job.id);
        } finally {
          await disposeAll([source]);
        }
      } catch (error) {
        const running = this.running.get(job.id);
        if (running) wanted.set(job.id, { fingerprint: running.fingerprint, source: running.source });
        // A job that cannot be resolved fails its own runs loudly; here it is only skipped.
        this.deps.logger.debug({ err: error, jobId: job.id }, 'change-log supervisor: job not resolved');
      }
    }
    return seen;
  }

  /**
   * Slots of jobs that streamed (a `change_log_streams` row) and are now deleted or out of point-in-time mode, but
   * that no archiver of this process was running (it had failed, or another process streamed it before it died):
   * dropped through the source the row names, under the job's lease so no live stream loses its slot.
   */
  private async dropSlotsOfGoneJobs(seen: JobsSeen): Promise<void> {
    const facts = await this.deps.store.streamFacts().catch(() => []);
    for (const fact of facts) {
      if (this.running.has(fact.jobId) || !isSlotUnwanted(seen, fact.jobId) || this.isStopped) continue;
      if (!(await this.deps.leases.tryAcquire(fact.jobId).catch(() => false))) continue;
      try {
        const source = fact.sourceConfigId ? await this.deps.catalog().resolveAdapterConfig(fact.sourceConfigId).catch(() => null) : null;
        if (source) await this.dropSlot(fact.jobId, source);
        else {
          this.deps.logger.warn({ jobId: fact.jobId }, 'change-log stream of a removed job: its source is gone too, so its replication slot cannot be dropped from here; drop it on the database server (docs/pitr.md)');
          await this.deps.store.deleteStream(fact.jobId);
        }
      } finally {
        await this.deps.leases.release(fact.jobId).catch(() => undefined);
      }
    }
  }

  /**
   * Drops the job's replication slot through `source` and forgets its stream row. A source that is not (any longer)
   * set up for point-in-time recovery cannot drop it: the slot is named in a warning for the administrator. A
   * source without `dropChangeLogStream` (MySQL/MariaDB) has nothing to drop.
   */
  private async dropSlot(jobId: string, resolved: ResolvedAdapterConfig): Promise<void> {
    const source = this.deps.adapters().source(resolved);
    try {
      const support = source.pointInTime?.();
      if (support && !support.dropChangeLogStream) {
        // A MySQL/MariaDB binary log stream reads as a replica would: the server holds nothing for it.
        this.deps.logger.info({ jobId }, `change-log stream of job ${jobId} ended; ${resolved.name} keeps nothing for it on the server (no replication slot to drop)`);
      } else if (!support?.dropChangeLogStream) {
        this.deps.logger.warn({ jobId }, `change-log stream of job ${jobId} ended, but source ${resolved.name} can no longer drop its replication slot (it left point-in-time mode); drop the slot on the database server by hand (docs/pitr.md)`);
      } else {
        await support.dropChangeLogStream(jobId);
        this.deps.logger.info({ jobId }, `replication slot of job ${jobId} dropped on ${resolved.name}: the job is gone or no longer point-in-time`);
      }
      await this.deps.store.deleteStream(jobId);
    } catch (error) {
      // The row stays, so the next pass tries again.
      this.deps.logger.warn({ err: error, jobId }, `replication slot of job ${jobId} not dropped (retried on the next pass)`);
    } finally {
      await disposeAll([source]);
    }
  }

  private startJob(jobId: string, fingerprint: string, source: ResolvedAdapterConfig): void {
    const controller = new AbortController();
    const since = new Date();
    const jobLogger = this.deps.logger.child?.({ jobId }) ?? this.deps.logger;
    const done = (async () => {
      await this.record(jobId, since, 'streaming', null);
      await this.deps.store.saveStreamSource(jobId, source.configId).catch((error: unknown) => jobLogger.warn({ err: error }, 'change-log stream source not recorded'));
      try {
        await runChangeLogArchiver(
          { catalog: this.deps.catalog(), adapters: this.deps.adapters(), store: this.deps.store, events: this.deps.events, logger: jobLogger, settings: this.deps.settings?.() },
          {
            jobId,
            spoolDir: join(this.deps.dataDir, 'pitr-spool', jobId),
            flushIntervalMs: this.options.flushIntervalMs,
            retry: this.options.retry,
            signal: controller.signal,
            onState: (state, error) => {
              const run = this.running.get(jobId);
              if (run?.controller === controller) Object.assign(run, { state, lastError: error ?? null });
              void this.record(jobId, since, state, error ?? null);
            },
          },
        );
        await this.record(jobId, since, 'stopped', null);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (controller.signal.aborted) {
          await this.record(jobId, since, 'stopped', null);
          return;
        }
        jobLogger.error({ err: error }, `change-log archiving failed: ${message}`);
        await this.record(jobId, since, 'failed', message);
        const name = await this.deps.catalog().jobNames([jobId]).then((names) => names.get(jobId) ?? jobId, () => jobId);
        emitPitrEvent(this.deps.events, jobLogger, 'pitr_stream_stopped', { jobId, jobName: name, message: `The change-log stream of job "${name}" stopped: ${message}`, error: message });
      } finally {
        if (this.running.get(jobId)?.controller === controller) this.running.delete(jobId);
        await this.deps.leases.release(jobId).catch(() => undefined);
      }
    })();
    this.running.set(jobId, { controller, done, fingerprint, source, since, state: 'streaming', lastError: null });
  }

  private async stopJob(jobId: string): Promise<void> {
    const run = this.running.get(jobId);
    if (!run) return;
    run.controller.abort(new Error('change-log archiving stopped'));
    await run.done;
  }

  private async checkLeases(): Promise<void> {
    if (this.running.size === 0) return;
    const held = await this.deps.leases.held();
    for (const [jobId, run] of this.running) {
      if (held.has(jobId)) continue;
      this.deps.logger.warn({ jobId }, 'change-log archiving stopped: this process lost the job\'s lease');
      run.controller.abort(new Error('lease lost'));
    }
  }

  private async record(jobId: string, since: Date, state: StreamState, lastError: string | null): Promise<void> {
    await this.deps.store
      .saveStream({ jobId, processId: this.deps.processId, host: hostname(), pid: process.pid, since, state, lastError, updatedAt: new Date() })
      .catch((error: unknown) => this.deps.logger.warn({ err: error, jobId }, 'change-log stream state not recorded'));
  }

  /** Stops every archiver and waits for them, then hands the leases back (engine shutdown). */
  async stop(): Promise<void> {
    this.isStopped = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.pass;
    for (const run of this.running.values()) run.controller.abort(new Error('engine shutdown'));
    await Promise.all([...this.running.values()].map((run) => run.done));
    await this.deps.leases.releaseAll();
  }
}

/** A job deleted from the catalog, or one that resolved without point-in-time, needs no slot; a disabled one keeps it. */
function isSlotUnwanted(seen: JobsSeen, jobId: string): boolean {
  return !seen.listed.has(jobId) || seen.notPointInTime.has(jobId);
}

/** What an archiver depends on: when it changes, the archiver restarts. Hashed: configs hold secrets. */
function fingerprintOf(plan: RunPlan): string {
  const material = {
    source: [plan.source.configId, plan.source.adapterId, plan.source.config, plan.source.credentials],
    destinations: plan.destinations.map((d) => [d.configId, d.adapterId, d.config, d.credentials]),
    codec: [plan.job.compression, plan.job.compressionLevel ?? null, plan.job.compressionThreads ?? null],
    encryption: [plan.encryption?.profileId ?? null, plan.encryption?.key.toString('hex') ?? null, plan.publicKeyEncryption?.recipient ?? null],
  };
  return createHash('sha256').update(JSON.stringify(material)).digest('hex');
}
