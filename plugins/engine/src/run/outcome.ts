import type { ExecutionStatus } from '../store/entities.js';

/** How a run ended, before it is written to the row. */
export interface RunOutcome {
  status: Exclude<ExecutionStatus, 'Pending' | 'Running'>;
  size?: number | null;
  path?: string | null;
}

/** Why a run was aborted; carried as the AbortSignal's reason. */
export type CancelCause = 'cancelled' | 'stuck' | 'shutdown';

/** The abort reason the engine uses, so a run can tell a cancellation from a failure. */
export class RunCancelled extends Error {
  override readonly name = 'AbortError';
  constructor(
    readonly reason: CancelCause,
    message: string,
  ) {
    super(message);
  }
}

/** The cancellation behind an aborted signal, if the engine aborted it. */
export function cancellationOf(signal: AbortSignal): RunCancelled | undefined {
  return signal.aborted && signal.reason instanceof RunCancelled ? signal.reason : undefined;
}

/** Message of any thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Progress while streaming: the dump's size is not known up front, so it approaches the end of the band. */
export function streamingProgress(bytes: number, from: number, to: number, scaleBytes = 256 * 1024 * 1024): number {
  return from + (to - from) * (1 - Math.exp(-bytes / scaleBytes));
}
