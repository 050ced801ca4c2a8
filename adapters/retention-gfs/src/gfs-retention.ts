import {
  TOKENS,
  inject,
  injectable,
  type RetentionCandidate,
  type RetentionDecision,
  type RetentionStrategy,
} from '@holdfast/sdk';
import type { RetentionPolicy } from './config.js';
import { unlockedNewestFirst } from './internal/candidates.js';
import { earliestPruneAt } from './internal/earliest-prune.js';
import { keepWholeChains } from './internal/chains.js';
import { assertTimeZone } from './internal/periods.js';
import { selectByTiers } from './internal/select-tiers.js';

const PRUNED = 'pruned: outside every tier';

/**
 * Applies one retention policy (keep-all, keep-last or GFS). `now` is not consulted: periods are counted by the
 * backups that exist, not by the calendar, so a paused job never loses its last backups to the passing of time.
 */
@injectable()
export class GfsRetention implements RetentionStrategy {
  constructor(@inject(TOKENS.AdapterConfig) private readonly policy: RetentionPolicy) {}

  select(backups: readonly RetentionCandidate[], _now: Date, timezone: string): RetentionDecision[] {
    assertTimeZone(timezone);
    const candidates = unlockedNewestFirst(backups);
    const kept = keepWholeChains(backups, this.keptByPolicy(candidates, timezone));
    return backups.map((backup): RetentionDecision => {
      if (backup.locked) return { key: backup.key, action: 'keep', reason: 'locked' };
      const reason = kept.get(backup.key);
      return reason === undefined
        ? { key: backup.key, action: 'prune', reason: this.pruneReason() }
        : { key: backup.key, action: 'keep', reason };
    });
  }

  /**
   * The earliest moment this policy may prune a backup created at `createdAt` that is the newest of its period in the
   * shortest tier: the start of its period plus that tier's count (counted in UTC; the object lock margin covers the
   * zone offset). A later backup of the same period may replace it sooner; an object lock then keeps it to this date.
   * keep-last and keep-all depend on counts, not dates: `null`.
   */
  earliestPruneAt(createdAt: Date): Date | null {
    return earliestPruneAt(this.policy, createdAt);
  }

  /** Keys the policy itself keeps (before chains are completed), with reasons. */
  private keptByPolicy(newestFirst: RetentionCandidate[], timezone: string): Map<string, string> {
    const policy = this.policy;
    if (policy.mode === 'keep-all' || !hasSettings(policy)) {
      const reason = policy.mode === 'keep-all' ? 'keep-all' : `${policy.mode}: no limits set, keeping everything`;
      return new Map(newestFirst.map((backup) => [backup.key, reason]));
    }
    if (policy.mode === 'keep-last') {
      const count = policy.count ?? newestFirst.length;
      return new Map(newestFirst.slice(0, count).map((backup, index) => [backup.key, `keep-last ${index + 1}/${count}`]));
    }
    return selectByTiers(newestFirst, policy, timezone);
  }

  private pruneReason(): string {
    return this.policy.mode === 'keep-last' ? `pruned: older than the newest ${this.policy.count ?? 0}` : PRUNED;
  }
}

/** A mode without settings keeps everything (the spec's rule); a GFS policy with every tier at 0 has none. */
function hasSettings(policy: RetentionPolicy): boolean {
  if (policy.mode === 'keep-last') return policy.count !== undefined;
  if (policy.mode === 'gfs') {
    return [policy.hourly, policy.daily, policy.weekly, policy.monthly, policy.yearly].some((n) => (n ?? 0) > 0);
  }
  return false;
}
