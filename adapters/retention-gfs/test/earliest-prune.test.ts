import { describe, expect, it } from 'vitest';
import { backup, dailyBackups, keptKeys, strategy } from './helpers.js';

// The retain-until date of S3 Object Lock follows from this (issue 45): it must never be later than the first run
// that can prune the backup by more than the lock margin, nor earlier than the policy keeps it.
describe('earliestPruneAt', () => {
  it('GFS: the start of the backup\'s period in the shortest tier plus that tier\'s count', () => {
    const createdAt = new Date('2026-11-19T02:00:00Z');
    expect(strategy({ mode: 'gfs', daily: 7, weekly: 4, monthly: 12 }).earliestPruneAt?.(createdAt)?.toISOString()).toBe('2026-11-26T00:00:00.000Z');
    // 2026-11-19 is a Thursday: its ISO week starts Monday 2026-11-16.
    expect(strategy({ mode: 'gfs', weekly: 4 }).earliestPruneAt?.(createdAt)?.toISOString()).toBe('2026-12-14T00:00:00.000Z');
    expect(strategy({ mode: 'gfs', hourly: 24, daily: 7 }).earliestPruneAt?.(createdAt)?.toISOString()).toBe('2026-11-20T02:00:00.000Z');
  });

  it('matches select: the daily backup is kept through the day before that date and pruned by a backup on it', () => {
    const policy = { mode: 'gfs', daily: 7 };
    const days = dailyBackups('2026-11-19', '2026-11-25');
    expect(keptKeys(policy, days)).toContain(days.at(-1)!.key);
    const withNext = [backup('2026-11-26T00:00:00Z', { key: 'next' }), ...days];
    expect(keptKeys(policy, withNext)).not.toContain(days.at(-1)!.key);
  });

  it('count-based and keep-all policies have no date (object lock then uses its configured period)', () => {
    const createdAt = new Date('2026-11-19T02:00:00Z');
    expect(strategy({ mode: 'keep-last', count: 3 }).earliestPruneAt?.(createdAt)).toBeNull();
    expect(strategy({ mode: 'keep-all' }).earliestPruneAt?.(createdAt)).toBeNull();
    expect(strategy({ mode: 'gfs' }).earliestPruneAt?.(createdAt)).toBeNull();
  });
});
