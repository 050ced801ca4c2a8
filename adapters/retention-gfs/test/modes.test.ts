import { describe, expect, it } from 'vitest';
import { backup, dailyBackups, decide, strategy } from './helpers.js';

describe('keep-all and keep-last', () => {
  it('keep-all keeps every backup', () => {
    expect(decide({ mode: 'keep-all' }, dailyBackups('2026-11-17', '2026-11-19'))).toEqual({
      '2026-11-19': 'keep: keep-all',
      '2026-11-18': 'keep: keep-all',
      '2026-11-17': 'keep: keep-all',
    });
  });

  it('keep-last keeps the newest N with their rank and prunes the rest', () => {
    expect(decide({ mode: 'keep-last', count: 2 }, dailyBackups('2026-11-16', '2026-11-19'))).toEqual({
      '2026-11-19': 'keep: keep-last 1/2',
      '2026-11-18': 'keep: keep-last 2/2',
      '2026-11-17': 'prune: pruned: older than the newest 2',
      '2026-11-16': 'prune: pruned: older than the newest 2',
    });
  });

  it('keep-last breaks ties on the same instant by key, whatever the listing order', () => {
    const same = [backup('2026-11-19T02:00:00Z', { key: 'b' }), backup('2026-11-19T02:00:00Z', { key: 'a' })];
    expect(decide({ mode: 'keep-last', count: 1 }, same)).toEqual({ a: 'keep: keep-last 1/1', b: 'prune: pruned: older than the newest 1' });
    expect(decide({ mode: 'keep-last', count: 1 }, [...same].reverse())).toEqual({ a: 'keep: keep-last 1/1', b: 'prune: pruned: older than the newest 1' });
  });

  it('keeps everything when the mode carries no settings', () => {
    const backups = dailyBackups('2026-11-01', '2026-11-19');
    for (const config of [{ mode: 'keep-last' }, { mode: 'gfs' }, { mode: 'gfs', daily: 0, weekly: 0 }]) {
      const verdicts = Object.values(decide(config, backups));
      expect(verdicts).toHaveLength(19);
      expect(new Set(verdicts)).toEqual(new Set([`keep: ${config.mode}: no limits set, keeping everything`]));
    }
  });
});

describe('locked backups', () => {
  it('are kept with reason "locked" and do not use up a tier or a keep-last slot', () => {
    const backups = [
      backup('2026-11-19T02:00:00Z', { key: 'newest-locked', locked: true }),
      backup('2026-11-18T02:00:00Z', { key: 'b' }),
      backup('2026-11-17T02:00:00Z', { key: 'c' }),
      backup('2025-01-01T02:00:00Z', { key: 'old-locked', locked: true }),
    ];
    expect(decide({ mode: 'keep-last', count: 1 }, backups)).toEqual({
      'newest-locked': 'keep: locked',
      b: 'keep: keep-last 1/1',
      c: 'prune: pruned: older than the newest 1',
      'old-locked': 'keep: locked',
    });
    // The locked backup's day does not count as covered: the daily tier still keeps 2026-11-18 and 2026-11-17.
    expect(decide({ mode: 'gfs', daily: 2 }, backups)).toEqual({
      'newest-locked': 'keep: locked',
      b: 'keep: daily 2026-11-18',
      c: 'keep: daily 2026-11-17',
      'old-locked': 'keep: locked',
    });
  });
});

describe('incremental chains', () => {
  const backups = [
    backup('2026-11-19T02:00:00Z', { key: 'inc-2', chainId: 'c1' }),
    backup('2026-11-18T02:00:00Z', { key: 'inc-1', chainId: 'c1' }),
    backup('2026-11-17T02:00:00Z', { key: 'full-1', chainId: 'c1' }),
    backup('2026-11-10T02:00:00Z', { key: 'inc-0', chainId: 'c0' }),
    backup('2026-11-09T02:00:00Z', { key: 'full-0', chainId: 'c0' }),
  ];

  it('keeps every member of a chain when one member is kept', () => {
    expect(decide({ mode: 'keep-last', count: 1 }, backups)).toEqual({
      'inc-2': 'keep: keep-last 1/1',
      'inc-1': 'keep: chain c1: kept with inc-2',
      'full-1': 'keep: chain c1: kept with inc-2',
      'inc-0': 'prune: pruned: older than the newest 1',
      'full-0': 'prune: pruned: older than the newest 1',
    });
  });

  it('keeps a whole chain when one member is locked', () => {
    const withLock = backups.map((b) => (b.key === 'full-0' ? { ...b, locked: true } : b));
    expect(decide({ mode: 'gfs', daily: 1 }, withLock)).toMatchObject({
      'inc-0': 'keep: chain c0: kept with full-0',
      'full-0': 'keep: locked',
    });
  });

  it('names the newest kept member when several members are kept', () => {
    expect(decide({ mode: 'gfs', daily: 2 }, backups)).toEqual({
      'inc-2': 'keep: daily 2026-11-19',
      'inc-1': 'keep: daily 2026-11-18',
      'full-1': 'keep: chain c1: kept with inc-2',
      'inc-0': 'prune: pruned: outside every tier',
      'full-0': 'prune: pruned: outside every tier',
    });
    // One weekly period (2026-W46) keeps inc-0, which brings its full backup along.
    expect(decide({ mode: 'gfs', daily: 1, weekly: 2 }, backups)).toMatchObject({
      'inc-0': 'keep: weekly 2026-W46',
      'full-0': 'keep: chain c0: kept with inc-0',
    });
  });
});

describe('bad input', () => {
  it('rejects a key listed twice, naming it', () => {
    const twice = [backup('2026-11-19T02:00:00Z', { key: 'x' }), backup('2026-11-18T02:00:00Z', { key: 'x' })];
    expect(() => decide({ mode: 'keep-all' }, twice)).toThrow('[retention-gfs] backup key "x" appears twice; every key must be listed once');
  });

  it('rejects a backup without a valid creation time, naming it', () => {
    const broken = [{ key: 'nodate', createdAt: new Date('not a date'), locked: false }];
    expect(() => strategy({ mode: 'keep-all' }).select(broken, new Date(), 'UTC')).toThrow(
      '[retention-gfs] backup "nodate" has no valid createdAt',
    );
  });

  it('returns no decisions for no backups', () => {
    expect(strategy({ mode: 'gfs', daily: 7 }).select([], new Date(), 'Europe/Berlin')).toEqual([]);
  });
});
