const DAY_MS = 24 * 60 * 60 * 1000;

/** A destination's object lock periods, under the config field names S3 and Azure Blob share. */
export interface ObjectLockPeriods {
  /** Days a backup stays locked when its retention policy gives no date (counted from `now`). */
  objectLockDays: number;
  /** Days added to the policy's date, so retention never meets a lock it caused itself. */
  objectLockMarginDays: number;
}

/**
 * The retain-until date of a backup on an object-locked destination: `policyEnd` (the first moment the job's
 * retention policy may prune it, `PutOptions.objectLock.retainUntil`) plus the margin, or `objectLockDays` after
 * `now` when the policy has no date. One rule for the adapters that write the lock and for the engine's retention
 * preview that predicts it. The result may be in the past or invalid: callers decide what that means.
 */
export function objectLockRetainUntil(policyEnd: Date | undefined, periods: ObjectLockPeriods, now: Date): Date {
  return policyEnd ? new Date(policyEnd.getTime() + periods.objectLockMarginDays * DAY_MS) : new Date(now.getTime() + periods.objectLockDays * DAY_MS);
}
