import type { RetentionCandidate } from '@holdfast/sdk';
import { GFS_TIERS, type RetentionPolicy } from '../config.js';
import { periodOf } from './periods.js';

/**
 * The grandfather-father-son walk (the prune rule of Proxmox Backup Server). Tiers run in order; each walks the
 * backups newest first, skips periods that already hold a backup kept by an earlier tier, and keeps the newest
 * backup of each new period until it has `count` periods. Returns the kept keys with their reasons.
 */
export function selectByTiers(
  newestFirst: readonly RetentionCandidate[],
  policy: RetentionPolicy,
  timezone: string,
): Map<string, string> {
  const kept = new Map<string, string>();
  for (const tier of GFS_TIERS) {
    const count = policy[tier] ?? 0;
    if (count === 0) continue;
    const period = periodOf(tier, timezone);
    // Periods covered by earlier tiers are not this tier's to count (daily=7, weekly=4 gives 4 *older* weeks).
    const coveredEarlier = new Set(newestFirst.filter((b) => kept.has(b.key)).map((b) => period(b.createdAt)));
    const chosen = new Set<string>();
    for (const backup of newestFirst) {
      if (kept.has(backup.key)) continue;
      const name = period(backup.createdAt);
      if (coveredEarlier.has(name) || chosen.has(name)) continue;
      if (chosen.size >= count) break;
      chosen.add(name);
      kept.set(backup.key, `${tier} ${name}`);
    }
  }
  return kept;
}
