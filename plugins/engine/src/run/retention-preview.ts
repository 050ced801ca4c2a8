import type { RetentionVerdict } from './retention.js';

/** A preview row: the retention verdict plus the retain-until date of the destination's object lock. */
export interface PreviewVerdict extends RetentionVerdict {
  /** ISO date until which the destination's object lock keeps the backup (computed); null without object lock. */
  retainUntil: string | null;
}

/**
 * What the retention run will really do on an object-locked destination: a backup the policy would prune while its
 * retain-until date is still ahead is refused by the store and kept (docs/immutability.md "Deleting"), so the
 * preview shows it kept with the date. `lockedUntil` is undefined for a destination without object lock: the
 * verdicts are then unchanged (with `retainUntil: null`).
 */
export function previewWithObjectLock(verdicts: readonly RetentionVerdict[], lockedUntil: ((createdAt: Date) => Date) | undefined, now: Date): PreviewVerdict[] {
  return verdicts.map((verdict) => {
    if (!lockedUntil) return { ...verdict, retainUntil: null };
    const until = lockedUntil(new Date(verdict.createdAt));
    const retainUntil = until.toISOString();
    if (verdict.action !== 'prune' || until.getTime() <= now.getTime()) return { ...verdict, retainUntil };
    return {
      ...verdict,
      retainUntil,
      action: 'keep' as const,
      reason: `locked until ${retainUntil} by the destination's object lock (the policy would prune it: ${verdict.reason})`,
    };
  });
}
