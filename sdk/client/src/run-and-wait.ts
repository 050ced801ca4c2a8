import type { HoldfastClient } from './client.js';
import { HoldfastApiError } from './errors.js';
import { FINAL_STATUSES, type ExecutionStatus, type ExecutionView } from './types.js';
import { watchExecution } from './watch.js';

/** What `onProgress` receives: the latest stage and percent, and the time since the run was triggered. */
export interface RunProgress {
  executionId: string;
  stage: string;
  progress: number;
  status: ExecutionStatus;
  elapsedMs: number;
  /** Bytes through the pipeline so far, when the server reports them. */
  bytes?: number;
  /** Average bytes per second since the bytes started to flow. */
  bytesPerSecond?: number;
}

export interface RunAndWaitOptions {
  /** Write the backup with `locked: true` (excluded from retention). */
  lock?: boolean;
  onProgress?: (progress: RunProgress) => void;
  /** Called once the run is queued, before any progress (e.g. to print the execution id). */
  onStarted?: (executionId: string) => void;
  /** Stops waiting (the execution keeps running on the server; cancel it with `POST /api/executions/{id}/cancel`). */
  signal?: AbortSignal;
  /** Polling interval when the event stream is unavailable or ends early (default 1000 ms). */
  pollIntervalMs?: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** `GET /api/executions/{id}` (logs not included). */
export async function getExecution(client: HoldfastClient, executionId: string): Promise<ExecutionView> {
  const answer = await client.unwrap(client.api.GET('/api/executions/{id}', { params: { path: { id: executionId } } }));
  return answer.data;
}

/**
 * Waits for an execution to end: follows its event stream, then confirms with `GET /api/executions/{id}`; when the
 * stream is unavailable (a proxy that buffers, an old server) it polls instead. Returns the final execution.
 */
export async function waitForExecution(
  client: HoldfastClient,
  executionId: string,
  options: Omit<RunAndWaitOptions, 'lock' | 'onStarted'> = {},
): Promise<ExecutionView> {
  const started = Date.now();
  let firstBytesAt: number | undefined;
  const report = (stage: string, progress: number, status: ExecutionStatus, bytes?: number | null) => {
    const now = Date.now();
    if (bytes && firstBytesAt === undefined) firstBytesAt = now;
    const seconds = firstBytesAt === undefined ? 0 : (now - firstBytesAt) / 1000;
    const flow = typeof bytes === 'number' ? { bytes, ...(seconds > 0 ? { bytesPerSecond: bytes / seconds } : {}) } : {};
    options.onProgress?.({ executionId, stage, progress, status, elapsedMs: now - started, ...flow });
  };
  try {
    for await (const event of watchExecution(client, executionId, { signal: options.signal })) {
      if (event.type === 'progress') report(event.stage, event.progress, event.status, event.bytesProcessed);
    }
  } catch (error) {
    // Auth and not-found answers are final; a broken stream is not: fall back to polling.
    if (error instanceof HoldfastApiError) throw error;
    if (options.signal?.aborted) throw error;
  }
  for (;;) {
    const view = await getExecution(client, executionId);
    if (FINAL_STATUSES.includes(view.status)) {
      report(view.stage, view.progress, view.status);
      return view;
    }
    report(view.stage, view.progress, view.status);
    await sleep(options.pollIntervalMs ?? 1000, options.signal);
  }
}

/** Triggers a job (`POST /api/jobs/{id}/run`) and waits for its execution to end; returns the final execution. */
export async function runAndWait(client: HoldfastClient, jobId: string, options: RunAndWaitOptions = {}): Promise<ExecutionView> {
  const queued = await client.unwrap(
    client.api.POST('/api/jobs/{id}/run', { params: { path: { id: jobId } }, body: options.lock ? { lock: true } : {} }),
  );
  options.onStarted?.(queued.executionId);
  return waitForExecution(client, queued.executionId, options);
}
