/** What an integrity check covers and how much it may read (SPEC execution type `IntegrityCheck`). */
export interface IntegrityCheckRequest {
  /** Only the backups of this job (on its destinations). */
  jobId?: string;
  /** Only the backups on this storage destination. */
  storageId?: string;
  /**
   * Stop after reading about this many bytes; the next budgeted run of the same scope continues after the last
   * backup this one checked (wrapping around), so successive runs cover everything. Absent or null: no limit.
   */
  byteBudget?: number | null;
}

/** Where an integrity check run stands, as {@link IntegrityChecks.outcome} reports it. */
export interface IntegrityCheckOutcome {
  executionId: string;
  /** The execution status: `Pending`/`Running` until it ends, then `Success`, `Partial`, `Failed` or `Cancelled`. */
  status: 'Pending' | 'Running' | 'Success' | 'Partial' | 'Failed' | 'Cancelled';
  /** Backups checked so far (all of them once the run ended). */
  checked: number;
  /** Bytes read back. */
  bytes: number;
  /** Problems found (each one is in the run's log; `integrity_check_failed` lists them). */
  problemCount: number;
  /** False when the byte budget stopped the run before the end of its scope (the next budgeted run continues). */
  complete: boolean;
  /** The last error the run logged (for a `Failed` run: why it failed); null when none. */
  error: string | null;
}

/**
 * Starts integrity checks (registered by the engine plugin as `TOKENS.IntegrityChecks`), so a system task can run
 * them on a schedule without importing the engine. `start` resolves when the run is queued, not when it ends; its
 * outcome is the execution `executionId` (Partial when backups failed, with `integrity_check_failed` raised once),
 * which `outcome` reads back (any process may run the queued execution, so it is read from the execution record).
 */
export interface IntegrityChecks {
  start(request: IntegrityCheckRequest, trigger?: { type: 'Manual' | 'Scheduler' | 'Api'; label: string | null }): Promise<{ executionId: string }>;
  /** The run's status and figures; null for an unknown execution or one that is not an integrity check. */
  outcome(executionId: string): Promise<IntegrityCheckOutcome | null>;
}
