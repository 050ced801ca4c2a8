import { DateTime } from 'luxon';
import { GFS_TIERS, type GfsTier, type RetentionPolicy } from '../config.js';

const UNIT: Record<GfsTier, 'hour' | 'day' | 'week' | 'month' | 'year'> = {
  hourly: 'hour',
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  yearly: 'year',
};

/**
 * When a GFS policy may first prune a backup that is the newest of its period in the shortest enabled tier: `count`
 * newer periods must have started (periods are counted by existing backups, so a backup that runs less often is kept
 * longer, never shorter). Count-based modes have no such date.
 */
export function earliestPruneAt(policy: RetentionPolicy, createdAt: Date): Date | null {
  if (policy.mode !== 'gfs') return null;
  const tier = GFS_TIERS.find((name) => (policy[name] ?? 0) > 0);
  if (!tier) return null;
  const unit = UNIT[tier];
  const start = DateTime.fromJSDate(createdAt, { zone: 'utc' }).startOf(unit);
  return start.plus({ [`${unit}s`]: policy[tier]! }).toJSDate();
}
