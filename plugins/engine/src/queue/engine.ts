import { randomUUID } from 'node:crypto';
import { NotFoundError, ValidationError, type KernelLogger } from '@holdfast/kernel';
import type { Execution, ExecutionStatus, TriggerType } from '../store/entities.js';
import type { ExecutionStore, ScheduledOutcome } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';
import { RunLog } from '../store/run-log.js';
import { runBackup } from '../run/backup-run.js';
import { messageOf, RunCancelled, type CancelCause, type RunOutcome } from '../run/outcome.js';
import { RunContext } from '../run/run-context.js';
import { settingOr, type RunServices } from '../run/services.js';
import { raiseSystemError } from '../run/system-error.js';
import { runRestore, type RestoreRequest } from '../restore/restore-run.js';
import { isTestRestoreRequest, runTestRestore } from '../test-restore/test-restore-run.js';
import { isPointRestoreRequest, type PointRestoreRequest } from '../pitr/restore/point-restore-request.js';
import { runPointRestore } from '../pitr/restore/point-restore-run.js';
import { refuseUnsupportedPointTestRestore } from '../pitr/test-restore/point-test-restore-run.js';
import { integrityScope, type IntegrityRequest, type VerificationRequest } from '../verify/integrity-request.js';
import { runIntegrity } from '../verify/integrity-run.js';
import type { EngineOptions } from './engine-options.js';
import { holderElsewhere } from './agent-placement.js';
import { reapOrphans } from './orphans.js';
import { runsJobs } from './process-role.js';
import { ProcessRegistry } from './process-registry.js';
import { QueueWakeups } from './wakeups.js';

/** Who asked for a run. */
export interface RunTrigger {
  type: TriggerType;
  /** User name, API key name or `Scheduler`. */
  label: string | null;
}

interface ActiveRun {
  context: RunContext;
  controller: AbortController;
  done: Promise<void>;
}

/** Waits before each attempt of the minimal final write when the full one failed. */
const FINAL_WRITE_RETRY_DELAYS_MS = [0, 500, 2_000, 5_000];
/** Most executions one claim transaction takes (PostgreSQL; libsql claims one at a time). */
const CLAIM_BATCH = 32;

const CANCEL_MESSAGES: Record<CancelCause, string> = {
  cancelled: 'cancellation requested',
  stuck: 'no progress within the Stuck Job Timeout',
  shutdown: 'the server shut down and the grace period ran out',
};

/**
 * The queue and its runner. Executions are rows; this process claims the oldest Pending one while fewer than
 * `maxConcurrentJobs` run anywhere, runs it, and looks again when a run ends and on a short poll interval. On
 * PostgreSQL several processes share the queue: each registers itself (`engine_processes`), takes at most its share
 * of the slots (`maxConcurrentJobs` over the live workers, rounded up), and wakes the others through `NOTIFY` when it
 * queues a run or frees a slot. An `api` process queues and cancels but never claims.
 */
export class Engine {
  readonly processId = randomUUID();
  private readonly active = new Map<string, ActiveRun>();
  private isStopping = false;
  private isStarted = false;
  private kicking: Promise<void> | undefined;
  private kickAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly registry: ProcessRegistry | undefined;
  private readonly wakeups: QueueWakeups | undefined;
  private liveWorkers: number | undefined;

  constructor(
    private readonly store: ExecutionStore,
    private readonly services: RunServices,
    private readonly options: EngineOptions,
    private readonly logger: KernelLogger,
  ) {
    if (store.dialect === 'postgresql' && store.database) {
      this.registry = new ProcessRegistry(store.database, this.processId, options.role);
      this.wakeups = new QueueWakeups(store.database, () => void this.kick(), logger);
    }
  }

  /** True when this process claims and runs executions (every role but `api`). */
  get isWorker(): boolean {
    return runsJobs(this.options.role);
  }

  /** Closes runs a crash left Running, then starts claiming (an `api` process only registers itself). */
  async start(): Promise<void> {
    this.logger.info({ processId: this.processId, role: this.options.role, pid: process.pid }, 'engine started');
    await this.registry?.beat(this.options.staleAfterMs);
    // Agents connected to this process are recorded as held by this engine id (runs for them are handed over here).
    this.services.adapters.remoteRunner?.()?.attachProcess?.(this.processId);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatMs).unref();
    if (!this.isWorker) return;
    await reapOrphans(this.store, this.services, null, this.logger, this.options);
    await this.wakeups?.ensure();
    this.isStarted = true;
    this.pollTimer = setInterval(() => {
      void this.wakeups?.ensure();
      void this.kick();
    }, this.options.pollIntervalMs).unref();
    void this.kick();
  }

  /** Wakes this process and, on PostgreSQL, every other one: the queue changed. */
  private queueChanged(): void {
    void this.kick();
    void this.wakeups?.announce();
  }

  private async announceIfPending(): Promise<void> {
    if (!this.wakeups) return;
    try {
      if (await this.store.hasPending()) await this.wakeups.announce();
    } catch (error) {
      this.logger.warn({ err: error }, 'queue: could not check for waiting executions; the others look on their next poll');
    }
  }

  /** Queues a backup of `jobId`; throws `NotFoundError('Job not found')` for an unknown job. */
  async enqueueRun(jobId: string, trigger: RunTrigger, options: { lock?: boolean } = {}): Promise<Execution> {
    const names = await this.services.catalog.jobNames([jobId]);
    if (!names.has(jobId)) throw new NotFoundError('Job not found');
    const execution = await this.store.create({ type: 'Backup', jobId, trigger, lock: options.lock });
    this.queueChanged();
    return execution;
  }

  /**
   * Queues the scheduled backups of one cron slot (`slot` null: a tick outside any slot, tests). Jobs that do not
   * exist any more are skipped (`unknown`); see {@link ExecutionStore.createScheduled} for the others.
   */
  async enqueueScheduledRuns(jobIds: string[], trigger: RunTrigger, slot: Date | null): Promise<Map<string, ScheduledOutcome | { skipped: 'unknown'; executionId?: undefined }>> {
    const names = await this.services.catalog.jobNames(jobIds);
    const known = jobIds.filter((jobId) => names.has(jobId));
    const outcomes: Map<string, ScheduledOutcome | { skipped: 'unknown'; executionId?: undefined }> = await this.store.createScheduled(known, slot, trigger);
    for (const jobId of jobIds) if (!names.has(jobId)) outcomes.set(jobId, { skipped: 'unknown' });
    if ([...outcomes.values()].some((outcome) => outcome.skipped === undefined)) this.queueChanged();
    return outcomes;
  }

  /** Queues a restore. */
  async enqueueRestore(request: RestoreRequest, trigger: RunTrigger): Promise<Execution> {
    const execution = await this.store.create({ type: 'Restore', jobId: null, trigger, request, metadata: { label: `Restore of ${request.file}` } });
    this.queueChanged();
    return execution;
  }

  /** Queues a point-in-time restore of a job (the route checked the request: pitr/restore/point-restore-preflight.ts). */
  async enqueuePointRestore(request: PointRestoreRequest, jobName: string, trigger: RunTrigger): Promise<Execution> {
    const execution = await this.store.create({ type: 'Restore', jobId: request.jobId, trigger, request, metadata: { label: `Point-in-time restore of ${jobName}` } });
    this.queueChanged();
    return execution;
  }

  /**
   * Queues an integrity check of one job, one destination or everything (no ids), optionally within a byte budget.
   * This is what the integrity system task calls. Unknown ids throw `NotFoundError` before anything is queued.
   */
  async enqueueIntegrityCheck(request: IntegrityRequest, trigger: RunTrigger): Promise<Execution> {
    if (request.jobId) await this.services.catalog.resolveRunPlan(request.jobId);
    if (request.storageId) await this.requireStorage(request.storageId);
    const execution = await this.store.create({ type: 'IntegrityCheck', jobId: request.jobId ?? null, trigger, request, metadata: { label: `Integrity check of ${integrityScope(request)}` } });
    this.queueChanged();
    return execution;
  }

  /** Queues the verification of one backup file on one destination. */
  async enqueueVerification(request: VerificationRequest, trigger: RunTrigger): Promise<Execution> {
    await this.requireStorage(request.storageId);
    const execution = await this.store.create({ type: 'Verification', jobId: null, trigger, request, metadata: { label: `Verification of ${request.file}` } });
    this.queueChanged();
    return execution;
  }

  /** Queues a test restore of the newest backup of `jobId` into the job's scratch target. */
  async enqueueTestRestore(jobId: string, trigger: RunTrigger): Promise<Execution> {
    const plan = await this.services.catalog.resolveRunPlan(jobId);
    if (!plan.job.testRestore) throw new ValidationError(`job "${plan.job.name}" has no test restore target (set testRestore on the job)`);
    // A MySQL/MariaDB point-in-time job whose target is not a database is refused here (422), not at run time.
    await refuseUnsupportedPointTestRestore(this.services, plan);
    const execution = await this.store.create({ type: 'Restore', jobId, trigger, request: { testRestore: true, jobId }, metadata: { label: `Test restore of ${plan.job.name}` } });
    this.queueChanged();
    return execution;
  }

  private async requireStorage(id: string): Promise<void> {
    const config = await this.services.catalog.resolveAdapterConfig(id);
    if (config.kind !== 'storage') throw new NotFoundError('Storage not found');
  }

  /** Pending -> Cancelled at once; Running -> aborted (here, or by its owner on its next heartbeat). */
  async cancel(id: string): Promise<ExecutionStatus> {
    const row = await this.store.get(id);
    if (!row) throw new NotFoundError('Execution not found');
    if (row.status === 'Pending' && (await this.store.cancelPending(id))) return 'Cancelled';
    const active = this.active.get(id);
    if (active) {
      this.abort(active, 'cancelled');
      await active.done;
    } else if (row.status === 'Running' || (await this.store.get(id))?.status === 'Running') {
      await this.store.requestCancel(id);
    }
    return (await this.store.get(id))?.status as ExecutionStatus;
  }

  /** Number of executions this process runs now. */
  get runningHere(): number {
    return this.active.size;
  }

  /** Claims as many executions as slots allow; concurrent calls coalesce into one more pass. */
  kick(): Promise<void> {
    if (!this.isStarted || this.isStopping) return Promise.resolve();
    if (this.kicking) {
      this.kickAgain = true;
      return this.kicking;
    }
    this.kicking = (async () => {
      do {
        this.kickAgain = false;
        try {
          const max = await settingOr(this.services.settings, 'maxConcurrentJobs', 1);
          const share = await this.shareOf(max);
          for (;;) {
            if (this.isStopping) return;
            // Already holding its share (every finished run anywhere wakes every worker): no claim transaction.
            if (share !== undefined && this.active.size >= share) break;
            if (!(await this.store.hasPending())) break;
            const room = (share ?? max) - this.active.size;
            const claimed = await this.store.claim(this.processId, max, share, Math.min(room, CLAIM_BATCH), this.options.staleAfterMs);
            if (claimed.length === 0) break;
            for (const execution of claimed) if (!(await this.handedOver(execution))) this.launch(execution);
          }
        } catch (error) {
          this.logger.error({ err: error }, 'queue: claiming failed; retrying on the next poll');
          raiseSystemError(this.services.events, 'queue', 'The run queue could not claim executions', error);
        }
      } while (this.kickAgain && !this.isStopping);
    })().finally(() => {
      this.kicking = undefined;
    });
    return this.kicking;
  }

  /**
   * PostgreSQL: this process's share of `max` among the live workers (rounded up, so the slots are all usable). The
   * worker count is re-read on each heartbeat, not on each claim: every finished run wakes every worker.
   */
  private async shareOf(max: number): Promise<number | undefined> {
    if (!this.registry) return undefined;
    this.liveWorkers ??= await this.countLiveWorkers();
    return Math.ceil(max / Math.max(1, this.liveWorkers));
  }

  private async countLiveWorkers(): Promise<number> {
    return (await this.registry!.live(this.options.staleAfterMs)).filter((row) => runsJobs(row.role)).length;
  }

  /**
   * PostgreSQL with remote agents: a run whose source's agent is connected to another live worker goes back to the
   * queue for that worker only (docs/agents.md "Several server processes"). True when handed over.
   */
  private async handedOver(execution: Execution): Promise<boolean> {
    if (!this.registry) return false;
    try {
      const runner = this.services.adapters.remoteRunner?.();
      const holder = await holderElsewhere(execution, this.services, runner, this.processId, async () =>
        (await this.registry!.live(this.options.staleAfterMs)).filter((row) => runsJobs(row.role)).map((row) => row.id),
      );
      if (!holder || !(await this.store.handOver(execution.id, this.processId, holder))) return false;
      this.logger.info({ executionId: execution.id, holder }, 'queue: run handed over to the process holding its agent');
      void this.wakeups?.announce();
      return true;
    } catch (error) {
      // A job deleted meanwhile, a database hiccup: run it here; the run itself reports what is wrong.
      this.logger.debug({ err: error, executionId: execution.id }, 'queue: could not look up the agent of a run');
      return false;
    }
  }

  private launch(execution: Execution): void {
    const controller = new AbortController();
    const log = new RunLog(this.store, execution.id, this.logger, 0);
    const context = new RunContext(execution, this.store, log, controller.signal, parseMetadata(execution.metadata));
    const active: ActiveRun = { context, controller, done: Promise.resolve() };
    this.active.set(execution.id, active);
    active.done = this.execute(context)
      .catch((error: unknown) => {
        this.logger.error({ err: error, executionId: execution.id }, 'run crashed');
        raiseSystemError(this.services.events, 'queue', `Execution ${execution.id} crashed`, error);
      })
      .finally(() => {
        this.active.delete(execution.id);
        // A slot came free: this process looks again, and so do the others (they may hold a smaller share) when
        // anything waits. An empty queue wakes nobody: whoever queues next announces it.
        void this.kick();
        void this.announceIfPending();
      });
  }

  private async execute(context: RunContext): Promise<void> {
    const { execution, log } = context;
    log.info(`${execution.type} run started (trigger ${execution.triggerType ?? 'Manual'}${execution.triggerLabel ? `: ${execution.triggerLabel}` : ''})`);
    let outcome: RunOutcome;
    try {
      outcome = await this.runByType(context);
    } catch (error) {
      log.error(`run failed: ${messageOf(error)}`);
      outcome = { status: 'Failed' };
    }
    context.metadata.stage = outcome.status === 'Cancelled' ? 'cancelled' : context.metadata.stage;
    if (outcome.status === 'Success' || outcome.status === 'Partial') context.metadata.progress = 100;
    const cause = context.signal.reason instanceof RunCancelled ? context.signal.reason.reason : undefined;
    if (outcome.status === 'Cancelled' && cause) context.metadata.cancelReason = cause;
    log.info(`finished: ${outcome.status}`);
    if (outcome.status === 'Failed') log.lastError = log.lastError ?? 'the run failed';
    await this.quietly(execution.id, 'could not store the last progress and log entries', async () => {
      await context.settle();
      await log.flush();
    });
    const error = outcome.status === 'Success' ? null : log.lastError;
    const isWritten = await this.recordOutcome(execution.id, outcome, error, context);
    if (!isWritten) this.logger.warn({ executionId: execution.id }, 'run ended but its row was no longer Running (closed by another process)');
    await this.quietly(execution.id, 'could not emit the outcome event', () => this.emitOutcome(execution, outcome, error, context));
  }

  private runByType(context: RunContext): Promise<RunOutcome> {
    const { execution } = context;
    if (execution.type === 'IntegrityCheck' || execution.type === 'Verification') return runIntegrity(context, this.services, this.store);
    if (execution.type === 'Restore') {
      const request: unknown = JSON.parse(execution.request ?? '{}');
      if (isTestRestoreRequest(request)) return runTestRestore(context, this.services, this.store);
      return isPointRestoreRequest(request) ? runPointRestore(context, this.services) : runRestore(context, this.services);
    }
    return runBackup(context, this.services);
  }

  /**
   * Writes the final status. Whatever an adapter or the database throws, the row must leave Running, or it holds a
   * slot of `maxConcurrentJobs` and every queued run waits until a restart (issue 10.4). When the full write fails,
   * a minimal one (status Failed, a fixed message, the metadata as it was) is retried a few times.
   */
  private async recordOutcome(id: string, outcome: RunOutcome, error: string | null, context: RunContext): Promise<boolean> {
    try {
      return await this.store.finish(id, outcome.status, { size: outcome.size, path: outcome.path, error, metadata: context.metadata });
    } catch (failure) {
      this.logger.error({ err: failure, executionId: id }, 'could not record the outcome of the run; recording it as Failed');
    }
    const fallback = `the run ended ${outcome.status} but its outcome could not be recorded (see the server log)`;
    for (const delayMs of FINAL_WRITE_RETRY_DELAYS_MS) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        return await this.store.finish(id, 'Failed', { error: fallback, metadata: { stage: context.metadata.stage } });
      } catch (failure) {
        this.logger.error({ err: failure, executionId: id }, 'could not record the run as Failed');
      }
    }
    return false;
  }

  /** Runs a bookkeeping step whose failure must not stop the run from reaching its final status. */
  private async quietly(id: string, what: string, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (failure) {
      this.logger.error({ err: failure, executionId: id }, what);
    }
  }

  private async emitOutcome(execution: Execution, outcome: RunOutcome, error: string | null, context: RunContext): Promise<void> {
    const events = this.services.events;
    if (!events) return;
    if (execution.type === 'IntegrityCheck' || execution.type === 'Verification') {
      const integrity = context.metadata.integrity;
      // Once per run, whatever the number of bad files: the event lists them.
      if (integrity && integrity.problems.length > 0) {
        await events.emit('integrity_check_failed', {
          executionId: execution.id,
          executionType: execution.type,
          scope: integrity.scope,
          checked: integrity.checked,
          bytes: integrity.bytes,
          problems: integrity.problems.slice(0, 50),
          problemCount: integrity.problemCount ?? integrity.problems.length,
        });
      }
      return;
    }
    const isTestRestore = execution.type === 'Restore' && isTestRestoreRequest(JSON.parse(execution.request ?? '{}'));
    if (isTestRestore) {
      // Decision: a failing test restore notifies like a failed backup of its job (the job's template, onFailed).
      if (outcome.status !== 'Failed') return;
      const jobId = execution.jobId ?? null;
      const jobName = jobId ? await this.services.catalog.jobNames([jobId]).then((names) => names.get(jobId), () => undefined) : undefined;
      await events.emit('backup_failure', { executionId: execution.id, jobId, ...(jobName ? { jobName } : {}), status: 'Failed', size: null, path: outcome.path ?? null, error: error?.startsWith('test restore failed') ? error : `test restore failed: ${error ?? 'see the execution log'}` });
      return;
    }
    if (execution.type === 'Restore') {
      const request = JSON.parse(execution.request ?? '{}') as RestoreRequest | PointRestoreRequest;
      // A point-in-time restore names the base backup it started from and the destination it was asked to read
      // (empty: it read the job's destinations by priority).
      const payload = isPointRestoreRequest(request)
        ? { executionId: execution.id, file: outcome.path ?? `point-in-time restore of job ${request.jobId}`, storageId: request.destinationId ?? '', targetSourceId: null }
        : { executionId: execution.id, file: request.file, storageId: request.storageId, targetSourceId: request.targetSourceId ?? null };
      if (outcome.status === 'Success' || outcome.status === 'Partial') await events.emit('restore_complete', payload);
      else await events.emit('restore_failure', { ...payload, ...(error ? { error } : {}) });
      return;
    }
    // Facts for notifications travel in the payload, so listeners need not read the engine's tables.
    const jobId = execution.jobId ?? null;
    const jobName = jobId ? await this.services.catalog.jobNames([jobId]).then((names) => names.get(jobId), () => undefined) : undefined;
    const startedAt = execution.startedAt ? new Date(execution.startedAt).getTime() : NaN;
    const payload = {
      executionId: execution.id,
      jobId,
      ...(jobName ? { jobName } : {}),
      status: outcome.status,
      size: outcome.size ?? null,
      path: outcome.path ?? null,
      ...(Number.isFinite(startedAt) ? { durationMs: Math.max(0, Date.now() - startedAt) } : {}),
    };
    if (outcome.status === 'Success') await events.emit('backup_success', payload);
    else if (outcome.status === 'Partial') await events.emit('backup_partial', { ...payload, ...(error ? { error } : {}) });
    else if (outcome.status === 'Failed') await events.emit('backup_failure', { ...payload, ...(error ? { error } : {}) });
  }

  private abort(active: ActiveRun, cause: CancelCause): void {
    if (active.controller.signal.aborted) return;
    active.context.log.warn(`cancelling: ${CANCEL_MESSAGES[cause]}`);
    active.controller.abort(new RunCancelled(cause, CANCEL_MESSAGES[cause]));
  }

  /** Heartbeat, cancel requests from other processes, Stuck Job Timeout, and orphans of dead processes. */
  private async heartbeat(): Promise<void> {
    try {
      await this.registry?.beat(this.options.staleAfterMs);
      if (!this.isWorker) return;
      if (this.registry) this.liveWorkers = await this.countLiveWorkers();
      const asked = await this.store.heartbeat(this.processId, [...this.active.keys()]);
      for (const id of asked) {
        const active = this.active.get(id);
        if (active) this.abort(active, 'cancelled');
      }
      const minutes = await settingOr<number | null>(this.services.settings, 'stuckJobTimeoutMinutes', 360);
      if (minutes !== null && minutes > 0) {
        for (const active of this.active.values()) {
          if (Date.now() - active.context.lastProgressAt > minutes * 60_000) this.abort(active, 'stuck');
        }
      }
      if (this.store.dialect === 'postgresql' && !this.isStopping) {
        await reapOrphans(this.store, this.services, new Date(Date.now() - this.options.staleAfterMs), this.logger, this.options);
      }
    } catch (error) {
      this.logger.error({ err: error }, 'engine heartbeat failed');
      raiseSystemError(this.services.events, 'queue', 'The engine heartbeat failed', error);
    }
  }

  /** Stops claiming, waits up to the grace period for running executions, then cancels what is left. */
  async stop(): Promise<void> {
    this.isStopping = true;
    clearInterval(this.pollTimer);
    await this.wakeups?.stop();
    await this.kicking;
    // The heartbeat keeps going through the grace period, or another process would take our runs for orphans.
    try {
      await this.drain();
    } finally {
      clearInterval(this.heartbeatTimer);
      await this.registry?.remove().catch((error: unknown) => this.logger.warn({ err: error }, 'engine: could not remove this process from engine_processes'));
    }
  }

  private async drain(): Promise<void> {
    const runs = [...this.active.values()];
    if (runs.length === 0) return;
    this.logger.info({ running: runs.length, graceMs: this.options.shutdownGraceMs }, 'waiting for running executions before shutdown');
    const all = Promise.all(runs.map((run) => run.done));
    let timer: NodeJS.Timeout | undefined;
    const isTimedOut = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.options.shutdownGraceMs)))]);
    clearTimeout(timer);
    if (isTimedOut) {
      for (const run of this.active.values()) this.abort(run, 'shutdown');
      await Promise.all([...this.active.values()].map((run) => run.done));
    }
  }
}
