import type { RetentionCandidate } from '@holdfast/sdk';
import { newestFirst } from './candidates.js';

/**
 * An incremental chain is only restorable whole, so one kept (or locked) member keeps every member. Returns the
 * extended map; members kept this way name the chain's newest kept member as their reason.
 */
export function keepWholeChains(
  backups: readonly RetentionCandidate[],
  kept: Map<string, string>,
): Map<string, string> {
  const keptBy = new Map<string, string>();
  for (const backup of [...backups].sort(newestFirst)) {
    if (backup.chainId !== undefined && (backup.locked || kept.has(backup.key)) && !keptBy.has(backup.chainId)) {
      keptBy.set(backup.chainId, backup.key);
    }
  }
  const result = new Map(kept);
  for (const backup of backups) {
    if (backup.chainId === undefined || result.has(backup.key)) continue;
    const anchor = keptBy.get(backup.chainId);
    if (anchor !== undefined) result.set(backup.key, `chain ${backup.chainId}: kept with ${anchor}`);
  }
  return result;
}
