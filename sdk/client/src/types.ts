import type { paths } from './generated/schema.js';

/** An execution as `GET /api/executions/{id}` returns it. */
export type ExecutionView = paths['/api/executions/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type ExecutionStatus = ExecutionView['status'];

/** The statuses after which an execution never changes again. */
export const FINAL_STATUSES: readonly ExecutionStatus[] = ['Success', 'Partial', 'Failed', 'Cancelled'];

/** `progress`: stage or percent changed. */
export interface ProgressEvent {
  type: 'progress';
  stage: string;
  progress: number;
  status: ExecutionStatus;
  /** Bytes through the pipeline so far (null before the data stage). */
  bytesProcessed?: number | null;
}

/** `log`: one new log line of the execution. */
export interface LogEvent {
  type: 'log';
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  stage: string;
  message: string;
}

/** `status`: the final state; the stream ends after it. */
export interface StatusEvent {
  type: 'status';
  status: ExecutionStatus;
  error: string | null;
  endedAt: string | null;
}

/** One event of `GET /api/executions/{id}/events`. */
export type ExecutionEvent = ProgressEvent | LogEvent | StatusEvent;
