import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** Kinds of execution (SPEC "Execution" `type`). */
export const EXECUTION_TYPES = ['Backup', 'Restore', 'IntegrityCheck', 'Verification'] as const;
/** One of {@link EXECUTION_TYPES}. */
export type ExecutionType = (typeof EXECUTION_TYPES)[number];

/** Execution states (SPEC "States and transitions / Execution status"). */
export const EXECUTION_STATUSES = ['Pending', 'Running', 'Success', 'Partial', 'Failed', 'Cancelled'] as const;
/** One of {@link EXECUTION_STATUSES}. */
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** Terminal states: an execution in one of these never changes again. */
export const FINAL_STATUSES: readonly ExecutionStatus[] = ['Success', 'Partial', 'Failed', 'Cancelled'];

/** What started a run. */
export const TRIGGER_TYPES = ['Manual', 'Scheduler', 'Api'] as const;
/** One of {@link TRIGGER_TYPES}. */
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/**
 * One execution row: the SPEC fields plus what the queue needs. `queueOrder` is the FIFO key (creation time in
 * microseconds plus an in-process counter, so two triggers in the same millisecond keep their order);
 * `claimedBy`/`heartbeatAt` tell which process runs it and whether that process is alive; `lastProgressAt` feeds
 * the Stuck Job Timeout. `metadata` is a JSON string (stage, progress, checksums, encryption, destinations).
 */
export const ExecutionEntity = defineEntity({
  name: 'Execution',
  tableName: 'executions',
  properties: {
    id: p.string().primary().length(36),
    jobId: p.string().length(36).nullable(),
    type: p.string().length(32),
    status: p.string().length(16),
    startedAt: p.datetime(),
    endedAt: p.datetime().nullable(),
    size: p.bigint('number').nullable(),
    path: p.text().nullable(),
    metadata: p.text().nullable(),
    triggerType: p.string().length(16).nullable(),
    triggerLabel: p.string().nullable(),
    createdAt: p.datetime(),
    queueOrder: p.bigint('number'),
    claimedBy: p.string().length(64).nullable(),
    heartbeatAt: p.datetime().nullable(),
    lastProgressAt: p.datetime().nullable(),
    /** The run body's `lock`: the backup's sidecar gets `locked: true`. */
    lockBackup: p.boolean().default(false),
    /** Set by a cancel request; the owning process (maybe another one) sees it on its next heartbeat. */
    cancelRequested: p.boolean().default(false),
    /** Restore runs: the request (storage, file, target) as JSON. */
    request: p.text().nullable(),
    /** Last error-level log message, kept on the row so polling and history need no log scan. */
    error: p.text().nullable(),
    /** Scheduled runs: the cron slot they were queued for (unique per job: a slot is queued once across processes). */
    scheduledFor: p.datetime().nullable(),
    /** A Pending run handed over to the process holding its source's agent (issue 48); null: any worker. */
    routedTo: p.string().length(64).nullable(),
  },
});

/** A stored execution. */
export type Execution = InferEntity<typeof ExecutionEntity>;

/** Log levels of an execution log entry. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One log line of an execution (append-only; `seq` orders lines written in the same millisecond). */
export const ExecutionLogEntity = defineEntity({
  name: 'ExecutionLog',
  tableName: 'execution_logs',
  properties: {
    id: p.integer().primary().autoincrement(),
    executionId: p.string().length(36),
    seq: p.integer(),
    time: p.datetime(),
    level: p.string().length(8),
    stage: p.string().length(32),
    message: p.text(),
  },
});

/** A stored log line. */
export type ExecutionLogRow = InferEntity<typeof ExecutionLogEntity>;
