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

/**
 * Starts integrity checks (registered by the engine plugin as `TOKENS.IntegrityChecks`), so a system task can run
 * them on a schedule without importing the engine. Resolves when the run is queued, not when it ends; its outcome is
 * the execution `executionId` (Partial when backups failed, with `integrity_check_failed` raised once).
 */
export interface IntegrityChecks {
  start(request: IntegrityCheckRequest, trigger?: { type: 'Manual' | 'Scheduler' | 'Api'; label: string | null }): Promise<{ executionId: string }>;
}
