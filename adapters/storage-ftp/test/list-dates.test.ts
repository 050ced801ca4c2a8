import { describe, expect, it } from 'vitest';
import { parseListDate } from '../src/internal/list-dates.js';

describe('parseListDate (LIST date column)', () => {
  const now = new Date(Date.UTC(2026, 10, 24, 9, 0));

  it('reads recent Unix dates (no year) in the current year, or last year when that would be in the future', () => {
    expect(parseListDate('Nov 24 08:25', now)?.toISOString()).toBe('2026-11-24T08:25:00.000Z');
    expect(parseListDate('Dec 30 23:59', now)?.toISOString()).toBe('2025-12-30T23:59:00.000Z');
  });

  it('reads older Unix dates with a year, and DOS dates with AM/PM', () => {
    expect(parseListDate('Feb  3  2024', now)?.toISOString()).toBe('2024-02-03T00:00:00.000Z');
    expect(parseListDate('11-24-26 08:25PM', now)?.toISOString()).toBe('2026-11-24T20:25:00.000Z');
    expect(parseListDate('01-02-2025 12:05AM', now)?.toISOString()).toBe('2025-01-02T00:05:00.000Z');
  });

  it('returns undefined for what it cannot read', () => {
    expect(parseListDate('yesterday', now)).toBeUndefined();
    expect(parseListDate(undefined, now)).toBeUndefined();
    expect(parseListDate('Foo 12 10:00', now)).toBeUndefined();
  });
});
