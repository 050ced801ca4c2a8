/** A backup as retention sees it. */
export interface RetentionCandidate {
  key: string;
  /** Creation time recorded in the sidecar, else the object's modification time. */
  createdAt: Date;
  /** Locked backups are always kept and never counted. */
  locked: boolean;
  /** Backups of one incremental chain are kept or deleted together. */
  chainId?: string;
}

/** The verdict on one backup, with a human-readable reason. */
export interface RetentionDecision {
  key: string;
  action: 'keep' | 'prune';
  reason: string;
}

/** Capabilities of a retention strategy (reserved; none yet). */
export type RetentionCapabilities = Record<string, never>;

/**
 * A retention policy instance (config = the policy). `select` is pure: the same input gives the same output, and
 * it returns exactly one decision per candidate.
 */
export interface RetentionStrategy {
  select(backups: readonly RetentionCandidate[], now: Date, timezone: string): RetentionDecision[];
  /**
   * Optional: the earliest moment this policy may delete a backup created at `createdAt`, or `null` when the policy
   * has no end computable from the date alone (count-based or keep-all). Object lock uses it as the retain-until date.
   */
  earliestPruneAt?(createdAt: Date): Date | null;
}
