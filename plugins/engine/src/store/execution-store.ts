import type { OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';

import type { EntityManager, Knex } from '@mikro-orm/knex';
import { ExecutionEntity, ExecutionLogEntity, type Execution, type ExecutionStatus, type ExecutionType, type LogLevel, type TriggerType } from './entities.js';
import { parseMetadata, type ExecutionMetadata } from './metadata.js';
import { Mutex } from './mutex.js';
import { storableText } from './storable-text.js';

/** What creates an execution. */
export interface NewExecution {
  type: ExecutionType;
  jobId: string | null;
  trigger: { type: TriggerType; label: string | null };
  lock?: boolean;
  request?: unknown;
  metadata?: ExecutionMetadata;
}

/** One log entry as the API shows it. */
export interface LogEntry {
  time: string;
  level: LogLevel;
  stage: string;
  message: string;
}

/** Log entry before it is stored. */
export interface PendingLogEntry extends LogEntry {
  executionId: string;
  seq: number;
}

// Two triggers in the same millisecond keep their order: microseconds from the clock plus a counter.
let orderCounter = 0;
function nextQueueOrder(): number {
  orderCounter = (orderCounter + 1) % 1000;
  return Date.now() * 1000 + orderCounter;
}

/** Jobs queued per statement by {@link ExecutionStore.createScheduled} (keeps bind parameters well under limits). */
const SCHEDULED_BATCH = 500;

/** What became of one job of a scheduled slot. */
export type ScheduledOutcome = { executionId: string; skipped?: undefined } | { skipped: 'pending'; executionId: string } | { skipped: 'queued'; executionId?: undefined };

const PG_CLAIM_LOCK = 0x486f6c64; // "Hold": the advisory lock that serialises claims across processes
const PG_KEY_LOCK = 0x4e616d65; // "Name": the advisory lock that serialises backup name picks across processes

/**
 * Every read and write of executions. The claim is the one place that must be atomic:
 * PostgreSQL takes a transaction-level advisory lock (so the Running count and the claim are one decision across
 * processes) and picks the oldest Pending row with `FOR UPDATE SKIP LOCKED`; libsql is one process, so an
 * in-process mutex plus `UPDATE ... WHERE status = 'Pending'` with an affected-row check does it.
 */
export class ExecutionStore {
  private readonly claimMutex = new Mutex();
  private readonly keyMutex = new Mutex();

  constructor(readonly database: OrmDatabase) {}

  em(): EntityManager {
    return this.database.em();
  }

  get dialect(): 'sqlite' | 'postgresql' {
    return this.database.dialect;
  }

  async create(input: NewExecution): Promise<Execution> {
    const em = this.em();
    const now = new Date();
    const row = em.create(ExecutionEntity, {
      id: randomUUID(),
      jobId: input.jobId,
      type: input.type,
      status: 'Pending',
      startedAt: now,
      createdAt: now,
      queueOrder: nextQueueOrder(),
      triggerType: input.trigger.type,
      triggerLabel: input.trigger.label,
      lockBackup: input.lock ?? false,
      cancelRequested: false,
      request: input.request === undefined ? null : JSON.stringify(input.request),
      metadata: JSON.stringify({ stage: 'queued', progress: 0, ...input.metadata }),
    });
    await em.persistAndFlush(row);
    return row;
  }

  /**
   * Queues scheduled backups of `jobIds` for one cron `slot` in a few statements whatever their number: a job that
   * still has a Pending scheduled run is skipped (`pending`), and a slot already queued for a job (by this process or
   * another that held the scheduler a moment ago) is skipped by the unique (job, slot) index (`queued`). Answers the
   * new execution id, or the reason, per job.
   */
  async createScheduled(jobIds: string[], slot: Date | null, trigger: { type: TriggerType; label: string | null }): Promise<Map<string, ScheduledOutcome>> {
    const knex = this.em().getKnex();
    const outcomes = new Map<string, ScheduledOutcome>();
    const toDb = (date: Date) => this.em().getPlatform().processDateProperty(date) as Knex.Value;
    for (let start = 0; start < jobIds.length; start += SCHEDULED_BATCH) {
      const batch = jobIds.slice(start, start + SCHEDULED_BATCH);
      const pending: Array<{ job_id: string; id: string }> = await knex('executions').select('job_id', 'id').whereIn('job_id', batch).andWhere({ status: 'Pending', trigger_type: 'Scheduler' });
      for (const row of pending) outcomes.set(row.job_id, { skipped: 'pending', executionId: row.id });
      const now = new Date();
      const rows = batch
        .filter((jobId) => !outcomes.has(jobId))
        .map((jobId) => ({
          id: randomUUID(),
          job_id: jobId,
          type: 'Backup',
          status: 'Pending',
          started_at: toDb(now),
          created_at: toDb(now),
          queue_order: nextQueueOrder(),
          trigger_type: trigger.type,
          trigger_label: trigger.label,
          lock_backup: false,
          cancel_requested: false,
          metadata: JSON.stringify({ stage: 'queued', progress: 0 }),
          scheduled_for: slot ? toDb(slot) : null,
        }));
      if (rows.length === 0) continue;
      await knex('executions').insert(rows).onConflict(['job_id', 'scheduled_for']).ignore();
      const stored: Array<{ id: string }> = await knex('executions').select('id').whereIn('id', rows.map((row) => row.id));
      const inserted = new Set(stored.map((row) => row.id));
      for (const row of rows) outcomes.set(row.job_id, inserted.has(row.id) ? { executionId: row.id } : { skipped: 'queued' });
    }
    return outcomes;
  }

  async get(id: string): Promise<Execution | null> {
    return this.em().findOne(ExecutionEntity, { id });
  }

  /**
   * True when any execution waits in the queue: one indexed read, so a worker woken by a finished run elsewhere does
   * not open a claim transaction (advisory lock, two reads) only to find the queue empty.
   */
  async hasPending(): Promise<boolean> {
    const row = await this.em().getKnex()('executions').select('id').where({ status: 'Pending' }).first();
    return row !== undefined;
  }

  async countRunning(): Promise<number> {
    return this.em().count(ExecutionEntity, { status: 'Running' });
  }

  /**
   * Claims the oldest Pending executions, at most `limit`, as many as slots allow (fewer than `maxRunning` running);
   * an empty list when none may start now. On PostgreSQL, `share` (when given) also caps the runs this process holds,
   * so several workers split the slots instead of the first one to wake taking them all. A burst of due runs is
   * claimed in one transaction rather than one each: with 167 runs due in one cron minute, one-by-one claims
   * (advisory lock, count, pick, update, commit, each serialised across processes) were the tail of the delay to
   * `Running` (docs/operations/scaling.md).
   */
  async claim(processId: string, maxRunning: number, share: number | undefined, limit: number, staleAfterMs = 60_000): Promise<Execution[]> {
    const ids = this.dialect === 'postgresql' ? await this.claimOnPostgres(processId, maxRunning, share, limit, staleAfterMs) : await this.claimMutex.run(() => this.claimOnLibsql(processId, maxRunning));
    if (ids.length === 0) return [];
    const rows = await this.em().find(ExecutionEntity, { id: { $in: ids } });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id)).filter((row): row is Execution => row !== undefined);
  }

  private async claimOnPostgres(processId: string, maxRunning: number, share: number | undefined, limit: number, staleAfterMs: number): Promise<string[]> {
    const knex = this.em().getKnex();
    return knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?)', [PG_CLAIM_LOCK]);
      const [counts] = await trx('executions')
        .where({ status: 'Running' })
        .select(trx.raw('count(*)::int AS total'), trx.raw('count(*) FILTER (WHERE claimed_by = ?)::int AS mine', [processId]));
      const { total, mine } = (counts ?? { total: 0, mine: 0 }) as { total: number; mine: number };
      const room = Math.min(limit, maxRunning - total, share === undefined ? Infinity : share - mine);
      if (room <= 0) return [];
      // One statement picks and marks them: the oldest Pending rows (FIFO), skipping rows another transaction holds.
      // The pick is a CTE, evaluated once: as an `IN (subquery ... LIMIT)` PostgreSQL may re-run the subquery per row
      // and mark more rows than the limit (seen in the tests). A run handed over to another live worker (it holds
      // the connection of the run's agent, issue 48) is left to that worker; when it stops, anyone takes it.
      const now = new Date();
      const { rows: updated } = (await trx.raw(
        `WITH picked AS (
           SELECT x.id FROM executions AS x
            WHERE x.status = 'Pending'
              AND (x.routed_to IS NULL OR x.routed_to = ? OR NOT EXISTS (
                    SELECT 1 FROM engine_processes AS p WHERE p.id = x.routed_to AND p.role <> 'api' AND p.heartbeat_at >= ?))
            ORDER BY x.queue_order, x.id LIMIT ? FOR UPDATE OF x SKIP LOCKED
         )
         UPDATE executions AS e
            SET status = 'Running', claimed_by = ?, heartbeat_at = ?, started_at = ?, last_progress_at = ?, routed_to = NULL
           FROM picked WHERE e.id = picked.id
         RETURNING e.id, e.queue_order`,
        [processId, now.getTime() - staleAfterMs, room, processId, now, now, now],
      )) as { rows: Array<{ id: string; queue_order: number | string }> };
      return updated.sort((a, b) => Number(a.queue_order) - Number(b.queue_order) || a.id.localeCompare(b.id)).map((row) => row.id);
    });
  }

  /**
   * Gives a run this process just claimed back to the queue for process `holder` only (it holds the connection of
   * the run's agent, issue 48): Pending again, routed to it. False when the row was not this process's Running row.
   */
  async handOver(id: string, processId: string, holder: string): Promise<boolean> {
    const changed = await this.em()
      .getKnex()('executions')
      .where({ id, status: 'Running', claimed_by: processId })
      .update({ status: 'Pending', claimed_by: null, heartbeat_at: null, last_progress_at: null, routed_to: holder });
    return Number(changed) === 1;
  }

  /** libsql is one process: one execution per claim keeps it simple, and nothing else competes for the queue. */
  private async claimOnLibsql(processId: string, maxRunning: number): Promise<string[]> {
    const em = this.em();
    if ((await em.count(ExecutionEntity, { status: 'Running' })) >= maxRunning) return [];
    const next = await em.findOne(ExecutionEntity, { status: 'Pending' }, { orderBy: { queueOrder: 'asc', id: 'asc' }, fields: ['id'] });
    if (!next) return [];
    const now = new Date();
    const updated = await em.nativeUpdate(
      ExecutionEntity,
      { id: next.id, status: 'Pending' },
      { status: 'Running', claimedBy: processId, heartbeatAt: now, startedAt: now, lastProgressAt: now },
    );
    return updated === 1 ? [next.id] : [];
  }

  /** Target keys recorded by Running executions (for name reservations across processes). */
  async runningTargets(): Promise<Set<string>> {
    const rows = await this.em().find(ExecutionEntity, { status: 'Running' }, { fields: ['metadata'] });
    return new Set(rows.map((row) => parseMetadata(row.metadata).target?.key).filter((key): key is string => typeof key === 'string'));
  }

  /**
   * Picks a backup key no Running execution holds and records it as this execution's target in one step. On
   * PostgreSQL the step holds a transaction-level advisory lock, so two processes picking names for runs of the same
   * job in the same second never both take one name; libsql is one process and serialises here.
   */
  async reserveTarget(executionId: string, configIds: string[], pick: (taken: Set<string>) => Promise<string>): Promise<string> {
    if (this.dialect !== 'postgresql') {
      return this.keyMutex.run(async () => {
        const key = await pick(await this.runningTargets());
        await this.recordTarget(this.em().getKnex(), executionId, { key, configIds });
        return key;
      });
    }
    return this.em()
      .getKnex()
      .transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(?)', [PG_KEY_LOCK]);
        const rows: Array<{ metadata: string | null }> = await trx('executions').select('metadata').where({ status: 'Running' });
        const taken = new Set(rows.map((row) => parseMetadata(row.metadata).target?.key).filter((key): key is string => typeof key === 'string'));
        const key = await pick(taken);
        await this.recordTarget(trx, executionId, { key, configIds });
        return key;
      });
  }

  private async recordTarget(knex: Knex, executionId: string, target: { key: string; configIds: string[] }): Promise<void> {
    const row: { metadata: string | null } | undefined = await knex('executions').select('metadata').where({ id: executionId }).first();
    await knex('executions').where({ id: executionId }).update({ metadata: JSON.stringify({ ...parseMetadata(row?.metadata), target }) });
  }

  /** Writes the metadata JSON of a running execution (and marks progress for the Stuck Job Timeout). */
  async saveMetadata(id: string, metadata: ExecutionMetadata, madeProgress: boolean): Promise<void> {
    const changes: Partial<Execution> = { metadata: JSON.stringify(metadata) };
    if (madeProgress) changes.lastProgressAt = new Date();
    await this.em().nativeUpdate(ExecutionEntity, { id }, changes);
  }

  /** Moves a Running execution to its final state; false when it was not Running any more. */
  async finish(
    id: string,
    status: Exclude<ExecutionStatus, 'Pending' | 'Running'>,
    fields: { size?: number | null; path?: string | null; error?: string | null; metadata: ExecutionMetadata },
  ): Promise<boolean> {
    const updated = await this.em().nativeUpdate(
      ExecutionEntity,
      { id, status: 'Running' },
      {
        status,
        endedAt: new Date(),
        size: fields.size ?? null,
        path: storableText(fields.path) ?? null,
        error: storableText(fields.error) ?? null,
        metadata: JSON.stringify(fields.metadata),
      },
    );
    return updated === 1;
  }

  /** Pending -> Cancelled; false when it had already been claimed or ended. */
  async cancelPending(id: string): Promise<boolean> {
    const row = await this.get(id);
    const metadata = { ...parseMetadata(row?.metadata), stage: 'cancelled', cancelReason: 'cancelled' };
    const updated = await this.em().nativeUpdate(
      ExecutionEntity,
      { id, status: 'Pending' },
      { status: 'Cancelled', endedAt: new Date(), metadata: JSON.stringify(metadata) },
    );
    return updated === 1;
  }

  /** Asks the owner of a Running execution to cancel it; false when it is not Running. */
  async requestCancel(id: string): Promise<boolean> {
    return (await this.em().nativeUpdate(ExecutionEntity, { id, status: 'Running' }, { cancelRequested: true })) === 1;
  }

  /** Refreshes the heartbeat of this process's runs and returns the ids whose cancellation was requested. */
  async heartbeat(processId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const em = this.em();
    await em.nativeUpdate(ExecutionEntity, { id: { $in: ids }, claimedBy: processId, status: 'Running' }, { heartbeatAt: new Date() });
    const asked = await em.find(ExecutionEntity, { id: { $in: ids }, cancelRequested: true }, { fields: ['id'] });
    return asked.map((row) => row.id);
  }

  /**
   * Running executions whose owner is gone: on libsql every Running row at boot (one process); on PostgreSQL the
   * rows whose heartbeat is older than `staleBefore` (their process stopped refreshing it).
   */
  async findOrphans(staleBefore: Date | null): Promise<Execution[]> {
    const where = staleBefore
      ? { status: 'Running', $or: [{ heartbeatAt: { $lt: staleBefore } }, { heartbeatAt: null }] }
      : { status: 'Running' };
    return this.em().find(ExecutionEntity, where as never);
  }

  /** Fails an orphaned execution if it is still Running with the same heartbeat (another process may race us). */
  async failOrphan(row: Execution, message: string): Promise<boolean> {
    const metadata = { ...parseMetadata(row.metadata), stage: 'interrupted' };
    const updated = await this.em().nativeUpdate(
      ExecutionEntity,
      { id: row.id, status: 'Running', heartbeatAt: row.heartbeatAt ?? null },
      { status: 'Failed', endedAt: new Date(), error: message, metadata: JSON.stringify(metadata) },
    );
    return updated === 1;
  }

  async appendLogs(entries: PendingLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const em = this.em();
    await em.insertMany(
      ExecutionLogEntity,
      entries.map((entry) => ({
        executionId: entry.executionId,
        seq: entry.seq,
        time: new Date(entry.time),
        level: entry.level,
        stage: entry.stage,
        message: storableText(entry.message),
      })),
    );
  }

  /** Log entries of an execution in order; `afterSeq` returns only newer ones (live streams). */
  async readLogs(executionId: string, afterSeq = -1): Promise<Array<LogEntry & { seq: number }>> {
    const rows = await this.em().find(
      ExecutionLogEntity,
      { executionId, seq: { $gt: afterSeq } },
      { orderBy: { seq: 'asc' } },
    );
    return rows.map((row) => ({
      seq: row.seq,
      time: row.time.toISOString(),
      level: row.level as LogLevel,
      stage: row.stage,
      message: row.message,
    }));
  }

  /** Highest log sequence number of an execution (-1 without logs), so a resumed logger continues after it. */
  async lastLogSeq(executionId: string): Promise<number> {
    const [row] = await this.em().find(ExecutionLogEntity, { executionId }, { orderBy: { seq: 'desc' }, limit: 1, fields: ['seq'] });
    return row?.seq ?? -1;
  }
}
