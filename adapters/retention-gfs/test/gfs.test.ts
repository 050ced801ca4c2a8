import { describe, expect, it } from 'vitest';
import { backup, dailyBackups, decide, keptKeys } from './helpers.js';

describe('gfs tiers', () => {
  it('keeps 7 daily backups plus the newest backup of 4 older ISO weeks (daily=7, weekly=4)', () => {
    const verdicts = decide({ mode: 'gfs', daily: 7, weekly: 4 }, dailyBackups('2026-10-01', '2026-11-19'));
    const kept = Object.entries(verdicts).filter(([, v]) => v.startsWith('keep'));
    expect(kept).toEqual([
      ['2026-11-19', 'keep: daily 2026-11-19'],
      ['2026-11-18', 'keep: daily 2026-11-18'],
      ['2026-11-17', 'keep: daily 2026-11-17'],
      ['2026-11-16', 'keep: daily 2026-11-16'],
      ['2026-11-15', 'keep: daily 2026-11-15'],
      ['2026-11-14', 'keep: daily 2026-11-14'],
      ['2026-11-13', 'keep: daily 2026-11-13'],
      ['2026-11-08', 'keep: weekly 2026-W45'],
      ['2026-11-01', 'keep: weekly 2026-W44'],
      ['2026-10-25', 'keep: weekly 2026-W43'],
      ['2026-10-18', 'keep: weekly 2026-W42'],
    ]);
    expect(verdicts['2026-11-12']).toBe('prune: pruned: outside every tier');
    expect(Object.keys(verdicts)).toHaveLength(50);
  });

  it('keeps the newest backup of each period and counts only periods that have backups', () => {
    const backups = [
      backup('2026-11-19T20:00:00Z'),
      backup('2026-11-19T08:00:00Z'),
      // nothing on 2026-11-18 and 2026-11-17: those days do not use up the tier
      backup('2026-11-16T23:00:00Z'),
      backup('2026-11-16T01:00:00Z'),
      backup('2026-11-10T12:00:00Z'),
    ];
    expect(decide({ mode: 'gfs', daily: 3 }, backups)).toEqual({
      '2026-11-19T20:00:00Z': 'keep: daily 2026-11-19',
      '2026-11-19T08:00:00Z': 'prune: pruned: outside every tier',
      '2026-11-16T23:00:00Z': 'keep: daily 2026-11-16',
      '2026-11-16T01:00:00Z': 'prune: pruned: outside every tier',
      '2026-11-10T12:00:00Z': 'keep: daily 2026-11-10',
    });
  });

  it('applies tiers in order hourly, daily, weekly, monthly, yearly', () => {
    const backups = [
      backup('2026-11-19T10:30:00Z'),
      backup('2026-11-19T10:10:00Z'),
      backup('2026-11-19T09:30:00Z'),
      backup('2026-11-18T09:30:00Z'),
      backup('2026-11-02T09:30:00Z'),
      backup('2026-10-20T09:30:00Z'),
      backup('2025-06-01T09:30:00Z'),
      backup('2024-06-01T09:30:00Z'),
    ];
    expect(decide({ mode: 'gfs', hourly: 2, daily: 1, weekly: 1, monthly: 1, yearly: 1 }, backups)).toEqual({
      '2026-11-19T10:30:00Z': 'keep: hourly 2026-11-19T10:00+00:00',
      '2026-11-19T10:10:00Z': 'prune: pruned: outside every tier',
      '2026-11-19T09:30:00Z': 'keep: hourly 2026-11-19T09:00+00:00',
      '2026-11-18T09:30:00Z': 'keep: daily 2026-11-18',
      '2026-11-02T09:30:00Z': 'keep: weekly 2026-W45',
      '2026-10-20T09:30:00Z': 'keep: monthly 2026-10',
      '2025-06-01T09:30:00Z': 'keep: yearly 2025',
      '2024-06-01T09:30:00Z': 'prune: pruned: outside every tier',
    });
  });

  it('GFS 7/4/12/2 over three and a half years of daily backups keeps 7 + 4 + 12 + 2 backups', () => {
    // Years 2026 and 2025 already hold backups kept by finer tiers, so the two yearly backups are 2024 and 2023.
    const verdicts = decide({ mode: 'gfs', daily: 7, weekly: 4, monthly: 12, yearly: 2 }, dailyBackups('2023-06-01', '2026-11-19'));
    const reasons = Object.values(verdicts).filter((v) => v.startsWith('keep')).map((v) => v.split(' ')[1]);
    expect(reasons.filter((r) => r === 'daily')).toHaveLength(7);
    expect(reasons.filter((r) => r === 'weekly')).toHaveLength(4);
    expect(reasons.filter((r) => r === 'monthly')).toHaveLength(12);
    expect(reasons.filter((r) => r === 'yearly')).toHaveLength(2);
    expect(reasons).toHaveLength(25);
    expect(verdicts['2026-09-30']).toBe('keep: monthly 2026-09');
    expect(verdicts['2025-10-31']).toBe('keep: monthly 2025-10');
    expect(verdicts['2025-09-30']).toBe('prune: pruned: outside every tier');
    expect(verdicts['2024-12-31']).toBe('keep: yearly 2024');
    expect(verdicts['2023-12-31']).toBe('keep: yearly 2023');
    expect(verdicts['2023-06-01']).toBe('prune: pruned: outside every tier');
  });
});

describe('time zones', () => {
  // 22:30 and 23:30 UTC on 18 November are 23:30 on the 18th and 00:30 on the 19th in Berlin.
  const pair = [backup('2026-11-18T23:30:00Z'), backup('2026-11-18T22:30:00Z')];

  it('puts two backups one hour apart into one UTC day but two Berlin days', () => {
    expect(keptKeys({ mode: 'gfs', daily: 2 }, pair, 'UTC')).toEqual(['2026-11-18T23:30:00Z']);
    expect(decide({ mode: 'gfs', daily: 2 }, pair, 'Europe/Berlin')).toEqual({
      '2026-11-18T23:30:00Z': 'keep: daily 2026-11-19',
      '2026-11-18T22:30:00Z': 'keep: daily 2026-11-18',
    });
  });

  it('treats the 25-hour autumn DST day in Berlin as one day and its two 02:00 hours as two hours', () => {
    // 25 Oct 2026: 03:00 CEST falls back to 02:00 CET. 00:30Z and 01:30Z are both 02:30 local.
    const twoHours = [backup('2026-10-25T01:30:00Z'), backup('2026-10-25T00:30:00Z')];
    expect(decide({ mode: 'gfs', hourly: 2 }, twoHours, 'Europe/Berlin')).toEqual({
      '2026-10-25T01:30:00Z': 'keep: hourly 2026-10-25T02:00+01:00',
      '2026-10-25T00:30:00Z': 'keep: hourly 2026-10-25T02:00+02:00',
    });
    // 00:30 CEST and 23:30 CET are 24 hours apart yet on the same local day.
    const oneDay = [backup('2026-10-25T22:30:00Z'), backup('2026-10-24T22:30:00Z')];
    expect(decide({ mode: 'gfs', daily: 2 }, oneDay, 'Europe/Berlin')).toEqual({
      '2026-10-25T22:30:00Z': 'keep: daily 2026-10-25',
      '2026-10-24T22:30:00Z': 'prune: pruned: outside every tier',
    });
    expect(keptKeys({ mode: 'gfs', daily: 2 }, oneDay, 'UTC')).toHaveLength(2);
  });

  it('treats the 23-hour spring DST day in Berlin as one day', () => {
    // 29 Mar 2026: 02:00 CET jumps to 03:00 CEST. 00:30 CET and 23:30 CEST are 22 hours apart.
    const oneDay = [backup('2026-03-29T21:30:00Z'), backup('2026-03-28T23:30:00Z')];
    expect(decide({ mode: 'gfs', daily: 2 }, oneDay, 'Europe/Berlin')).toEqual({
      '2026-03-29T21:30:00Z': 'keep: daily 2026-03-29',
      '2026-03-28T23:30:00Z': 'prune: pruned: outside every tier',
    });
    const aroundGap = [backup('2026-03-29T01:30:00Z'), backup('2026-03-29T00:30:00Z')];
    expect(decide({ mode: 'gfs', hourly: 2 }, aroundGap, 'Europe/Berlin')).toEqual({
      '2026-03-29T01:30:00Z': 'keep: hourly 2026-03-29T03:00+02:00',
      '2026-03-29T00:30:00Z': 'keep: hourly 2026-03-29T01:00+01:00',
    });
  });

  it('rejects an unknown zone with a CONFIG error naming it', () => {
    expect(() => decide({ mode: 'keep-all' }, pair, 'Europe/Berln')).toThrow(
      '[retention-gfs] unknown time zone "Europe/Berln" (expected an IANA name such as Europe/Berlin)',
    );
  });
});

describe('ISO weeks across the year boundary', () => {
  const turn = [
    backup('2027-01-04T12:00:00Z'),
    backup('2027-01-03T12:00:00Z'),
    backup('2027-01-01T12:00:00Z'),
    backup('2026-12-31T12:00:00Z'),
    backup('2026-12-28T12:00:00Z'),
    backup('2026-12-27T12:00:00Z'),
  ];

  it('puts 2026-12-28 to 2027-01-03 into 2026-W53 and 2027-01-04 into 2027-W01', () => {
    expect(decide({ mode: 'gfs', weekly: 3 }, turn)).toEqual({
      '2027-01-04T12:00:00Z': 'keep: weekly 2027-W01',
      '2027-01-03T12:00:00Z': 'keep: weekly 2026-W53',
      '2027-01-01T12:00:00Z': 'prune: pruned: outside every tier',
      '2026-12-31T12:00:00Z': 'prune: pruned: outside every tier',
      '2026-12-28T12:00:00Z': 'prune: pruned: outside every tier',
      '2026-12-27T12:00:00Z': 'keep: weekly 2026-W52',
    });
  });

  it('splits the same days by calendar year in the yearly tier', () => {
    expect(keptKeys({ mode: 'gfs', yearly: 2 }, turn)).toEqual(['2027-01-04T12:00:00Z', '2026-12-31T12:00:00Z']);
  });

  it('buckets the week in the given zone: Sunday 23:30 UTC is Monday in Berlin', () => {
    const late = [backup('2027-01-03T23:30:00Z'), backup('2027-01-03T10:00:00Z')];
    expect(keptKeys({ mode: 'gfs', weekly: 2 }, late, 'UTC')).toEqual(['2027-01-03T23:30:00Z']);
    expect(decide({ mode: 'gfs', weekly: 2 }, late, 'Europe/Berlin')).toEqual({
      '2027-01-03T23:30:00Z': 'keep: weekly 2027-W01',
      '2027-01-03T10:00:00Z': 'keep: weekly 2026-W53',
    });
  });
});
