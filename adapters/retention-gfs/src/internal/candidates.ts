import type { RetentionCandidate } from '@holdfast/sdk';

/**
 * Checks the input and returns the unlocked candidates newest first. Ties on `createdAt` are broken by key so the
 * outcome never depends on the order the storage listed the files in.
 */
export function unlockedNewestFirst(backups: readonly RetentionCandidate[]): RetentionCandidate[] {
  const seen = new Set<string>();
  for (const backup of backups) {
    if (seen.has(backup.key)) {
      throw new TypeError(`[retention-gfs] backup key "${backup.key}" appears twice; every key must be listed once`);
    }
    seen.add(backup.key);
    if (!(backup.createdAt instanceof Date) || Number.isNaN(backup.createdAt.getTime())) {
      throw new TypeError(`[retention-gfs] backup "${backup.key}" has no valid createdAt`);
    }
  }
  return backups.filter((backup) => !backup.locked).sort(newestFirst);
}

/** Newest first; equal times ordered by key (code-unit order, locale-independent). */
export function newestFirst(a: RetentionCandidate, b: RetentionCandidate): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
