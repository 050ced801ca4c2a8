import { z } from 'zod';
import { EXECUTION_STATUSES, EXECUTION_TYPES, LOG_LEVELS, type Execution } from '../store/entities.js';
import type { LogEntry } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';

/** One log entry as the API shows it. */
export const logEntrySchema = z.object({
  time: z.string().describe('ISO 8601, UTC'),
  level: z.enum(LOG_LEVELS),
  stage: z.string(),
  message: z.string(),
});

/** The execution representation of the polling endpoint (SPEC "Execution"). */
export const executionViewSchema = z.object({
  id: z.string(),
  jobId: z.string().nullable(),
  jobName: z.string(),
  type: z.enum(EXECUTION_TYPES),
  status: z.enum(EXECUTION_STATUSES),
  progress: z.int().min(0).max(100),
  stage: z.string(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  duration: z.int().min(0).describe('Milliseconds; computed live while endedAt is null'),
  size: z.int().nullable(),
  path: z.string().nullable(),
  error: z.string().nullable().describe('On Failed: the last error-level log message'),
  logs: z.array(logEntrySchema).optional().describe('Only with includeLogs=true'),
});

/** An execution as the API shows it. */
export type ExecutionView = z.output<typeof executionViewSchema>;

/** Builds the representation; `jobName` of an execution without a job is its label (e.g. "Restore of x.dump"). */
export function toExecutionView(row: Execution, jobName: string | undefined, logs?: LogEntry[], now = Date.now()): ExecutionView {
  const metadata = parseMetadata(row.metadata);
  const started = row.startedAt.getTime();
  const ended = row.endedAt ? row.endedAt.getTime() : null;
  return {
    id: row.id,
    jobId: row.jobId ?? null,
    jobName: jobName ?? metadata.label ?? (row.jobId ? 'deleted job' : row.type),
    type: row.type as ExecutionView['type'],
    status: row.status as ExecutionView['status'],
    progress: Math.round(Math.min(100, Math.max(0, metadata.progress ?? 0))),
    stage: metadata.stage ?? 'queued',
    startedAt: row.startedAt.toISOString(),
    endedAt: row.endedAt ? row.endedAt.toISOString() : null,
    duration: Math.max(0, (ended ?? now) - started),
    size: row.size ?? null,
    path: row.path ?? null,
    error: row.status === 'Success' ? null : (row.error ?? null),
    ...(logs ? { logs } : {}),
  };
}
