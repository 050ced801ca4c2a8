import type { PointTestRestoreMetadata } from '../pitr/test-restore/point-test-restore-run.js';
import type { Execution } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';
import { recentFinished } from '../store/verification-queries.js';
import { isTestRestoreRequest } from './test-restore-run.js';

/** The measured restore time (RTO) of a job: its newest passing test restore, and how the newest one ended. */
export interface RestoreTime {
  jobId: string;
  /** Duration of the newest passing test restore (restore plus checks), in milliseconds; null before the first. */
  measuredRestoreMs: number | null;
  measuredAt: string | null;
  measuredExecutionId: string | null;
  /** The newest test restore, passing or not. */
  last: { executionId: string; status: string; endedAt: string | null; error: string | null; file: string | null } | null;
  /**
   * Point-in-time jobs only (absent for others): the recovery point the newest passing test restore achieved, the
   * random instant it restored to and the seconds between them (docs/pitr.md, "Test restores").
   */
  recoveryPoint?: { target: string; recoveredTo: string | null; differenceSeconds: number | null; restoreSeconds: number | null };
}

const isTestRestore = (row: Execution): boolean => {
  try {
    return isTestRestoreRequest(JSON.parse(row.request ?? '{}'));
  } catch {
    return false;
  }
};

function summarise(jobId: string, rows: Execution[]): RestoreTime {
  const tests = rows.filter(isTestRestore);
  const passed = tests.find((row) => row.status === 'Success');
  const last = tests[0];
  const record = passed ? (parseMetadata(passed.metadata).testRestore as PointTestRestoreMetadata | undefined) : undefined;
  const measured = record?.durationMs;
  const point = record?.pointInTime;
  return {
    jobId,
    measuredRestoreMs: measured ?? null,
    measuredAt: passed?.endedAt ? new Date(passed.endedAt).toISOString() : null,
    measuredExecutionId: passed?.id ?? null,
    last: last ? { executionId: last.id, status: last.status, endedAt: last.endedAt ? new Date(last.endedAt).toISOString() : null, error: last.error ?? null, file: last.path ?? null } : null,
    ...(point ? { recoveryPoint: { target: point.target, recoveredTo: point.recoveredTo, differenceSeconds: point.differenceSeconds, restoreSeconds: point.restoreSeconds } } : {}),
  };
}

/** The restore time of one job. */
export async function restoreTimeOf(store: ExecutionStore, jobId: string): Promise<RestoreTime> {
  return summarise(jobId, await recentFinished(store, 'Restore', { jobId, limit: 50 }));
}

/** Restore times of every job that has had a test restore (newest 2 000 restore executions looked at). */
export async function restoreTimes(store: ExecutionStore): Promise<RestoreTime[]> {
  const rows = (await recentFinished(store, 'Restore', { limit: 2000 })).filter((row) => row.jobId);
  const byJob = new Map<string, Execution[]>();
  for (const row of rows) byJob.set(row.jobId!, [...(byJob.get(row.jobId!) ?? []), row]);
  return [...byJob].map(([jobId, jobRows]) => summarise(jobId, jobRows)).filter((time) => time.last);
}
