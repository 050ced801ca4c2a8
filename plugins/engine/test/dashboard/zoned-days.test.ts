import { describe, expect, it } from 'vitest';
import { dayOf, startOfDay } from '../../src/dashboard/zoned-days.js';

// "UTC" is answered from the Date itself (no Intl.DateTimeFormat, see zoned-days.ts); "Etc/UTC" is the same zone
// through Intl, so the two must agree everywhere.
describe('zoned days in UTC without Intl', () => {
  const instants = [0, Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 28, 23, 59, 59), Date.UTC(2028, 1, 29, 12), Date.UTC(2026, 10, 29, 0, 0, 0, 1)];
  for (let step = 0; step < 40; step++) instants.push(Date.UTC(2025, 0, 1) + step * 9_876_543_211);

  it('dayOf matches the Intl answer for Etc/UTC', () => {
    for (const instant of instants) expect(dayOf(instant, 'UTC'), new Date(instant).toISOString()).toBe(dayOf(instant, 'Etc/UTC'));
  });

  it('startOfDay matches the Intl answer for Etc/UTC and is midnight UTC', () => {
    for (const day of ['2026-01-01', '2026-03-29', '2028-02-29', '2026-11-29']) {
      expect(startOfDay(day, 'UTC').getTime()).toBe(startOfDay(day, 'Etc/UTC').getTime());
      expect(startOfDay(day, 'UTC').toISOString()).toBe(`${day}T00:00:00.000Z`);
    }
  });

  it('a named zone still goes through Intl', () => {
    // 23:30 UTC on 28 March 2026 is already the 29th in Berlin (UTC+1).
    expect(dayOf(Date.UTC(2026, 2, 28, 23, 30), 'Europe/Berlin')).toBe('2026-03-29');
    expect(dayOf(Date.UTC(2026, 2, 28, 23, 30), 'UTC')).toBe('2026-03-28');
  });
});
