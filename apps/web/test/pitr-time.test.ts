// The point-in-time restore dialog's pure rules: a wall time in the user's zone to the ISO instant with offset the API
// takes (DST gaps and repeats included), the window's bounds to the second, the targets and the recovery point.
import { describe, expect, it } from 'vitest';
import { checkTarget, describeAge, describeWindow, pickableSeconds, recoveryPointTone, servePortProblem, targetPathProblem } from '../src/pitr/restore-target.js';
import { formatInZone, isoWithOffset, offsetMinutesAt, resolveWallTime, wallTimeOf, zoneAbbreviation } from '../src/pitr/zoned-time.js';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

describe('wall time in a zone to an ISO instant with offset', () => {
  it('uses the offset the zone has on that date, winter and summer', () => {
    const winter = resolveWallTime({ date: '2026-12-06', time: '14:03:27' }, BERLIN);
    expect(winter).toEqual({ kind: 'exact', epochMs: Date.parse('2026-12-06T13:03:27Z') });
    expect(isoWithOffset(Date.parse('2026-12-06T13:03:27Z'), BERLIN)).toBe('2026-12-06T14:03:27+01:00');
    const summer = resolveWallTime({ date: '2026-07-01', time: '14:03:27' }, BERLIN);
    expect(summer).toEqual({ kind: 'exact', epochMs: Date.parse('2026-07-01T12:03:27Z') });
    expect(isoWithOffset(Date.parse('2026-07-01T12:03:27Z'), BERLIN)).toBe('2026-07-01T14:03:27+02:00');
    expect(isoWithOffset(Date.parse('2026-12-06T19:03:27Z'), NEW_YORK)).toBe('2026-12-06T14:03:27-05:00');
    expect(isoWithOffset(Date.parse('2026-12-06T08:33:27Z'), 'Asia/Kolkata')).toBe('2026-12-06T14:03:27+05:30');
    expect(isoWithOffset(Date.parse('2026-12-06T14:03:27Z'), 'UTC')).toBe('2026-12-06T14:03:27+00:00');
  });

  it('the ISO string names the same instant it was made from, on both sides of a DST change', () => {
    for (const instant of ['2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z', '2026-10-25T00:59:59Z', '2026-10-25T01:00:00Z', '2026-03-08T06:59:59Z', '2026-03-08T07:00:00Z']) {
      for (const zone of [BERLIN, NEW_YORK]) expect(Date.parse(isoWithOffset(Date.parse(instant), zone))).toBe(Date.parse(instant));
    }
    expect(isoWithOffset(Date.parse('2026-03-29T00:59:59Z'), BERLIN)).toBe('2026-03-29T01:59:59+01:00');
    expect(isoWithOffset(Date.parse('2026-03-29T01:00:00Z'), BERLIN)).toBe('2026-03-29T03:00:00+02:00');
  });

  it('refuses a time the clocks skip and takes the first of a repeated one', () => {
    expect(resolveWallTime({ date: '2026-03-29', time: '02:30:00' }, BERLIN)).toEqual({ kind: 'skipped' });
    expect(resolveWallTime({ date: '2026-03-08', time: '02:30:00' }, NEW_YORK)).toEqual({ kind: 'skipped' });
    expect(resolveWallTime({ date: '2026-10-25', time: '02:30:00' }, BERLIN)).toEqual({ kind: 'ambiguous', epochMs: Date.parse('2026-10-25T00:30:00Z'), later: Date.parse('2026-10-25T01:30:00Z') });
    expect(resolveWallTime({ date: '2026-10-25', time: '03:00:00' }, BERLIN)).toEqual({ kind: 'exact', epochMs: Date.parse('2026-10-25T02:00:00Z') });
    expect(resolveWallTime({ date: '2026-03-29', time: '03:00:00' }, BERLIN)).toEqual({ kind: 'exact', epochMs: Date.parse('2026-03-29T01:00:00Z') });
  });

  it('rejects malformed and impossible dates, accepts a time without seconds', () => {
    expect(resolveWallTime({ date: '2026-02-30', time: '10:00:00' }, BERLIN).kind).toBe('invalid');
    expect(resolveWallTime({ date: '06.12.2026', time: '10:00:00' }, BERLIN).kind).toBe('invalid');
    expect(resolveWallTime({ date: '2026-12-06', time: '24:00:00' }, BERLIN).kind).toBe('invalid');
    expect(resolveWallTime({ date: '2026-12-06', time: '10:00' }, BERLIN)).toEqual({ kind: 'exact', epochMs: Date.parse('2026-12-06T09:00:00Z') });
  });

  it('offsets, wall times and zone names', () => {
    expect(offsetMinutesAt(Date.parse('2026-12-06T12:00:00Z'), BERLIN)).toBe(60);
    expect(offsetMinutesAt(Date.parse('2026-07-06T12:00:00Z'), BERLIN)).toBe(120);
    expect(offsetMinutesAt(Date.parse('2026-12-06T12:00:00Z'), NEW_YORK)).toBe(-300);
    expect(wallTimeOf(Date.parse('2026-12-31T23:30:00Z'), BERLIN)).toEqual({ date: '2027-01-01', time: '00:30:00' });
    expect(zoneAbbreviation(Date.parse('2026-12-06T12:00:00Z'), BERLIN)).toBe('CET');
    expect(zoneAbbreviation(Date.parse('2026-07-06T12:00:00Z'), BERLIN)).toBe('CEST');
    expect(zoneAbbreviation(Date.parse('2026-12-06T12:00:00Z'), NEW_YORK)).toBe('EST');
    expect(formatInZone(Date.parse('2026-12-06T13:03:27.900Z'), BERLIN)).toBe('2026-12-06 14:03:27 CET');
  });
});

describe('the window and the targets', () => {
  const window = { start: '2026-12-06T13:00:15.400Z', end: '2026-12-06T14:10:25.700Z' };

  it('offers whole seconds inside the window only', () => {
    expect(pickableSeconds(window)).toEqual({ first: Date.parse('2026-12-06T13:00:16Z'), last: Date.parse('2026-12-06T14:10:25Z') });
    expect(pickableSeconds({ start: '2026-12-06T13:00:15.100Z', end: '2026-12-06T13:00:15.900Z' })).toBeNull();
    expect(describeWindow(window, BERLIN)).toBe('2026-12-06 14:00:15 – 2026-12-06 15:10:25 CET (Europe/Berlin)');
  });

  it('a time inside is sent with its offset; before the start or after the end it is refused naming the window', () => {
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:03:27' } }, window, BERLIN)).toEqual({
      ok: true,
      target: { type: 'time', time: '2026-12-06T14:03:27+01:00' },
      summary: 'as it was at 2026-12-06 14:03:27 CET',
    });
    const message = 'Pick a time inside the recoverable window: 2026-12-06 14:00:15 – 2026-12-06 15:10:25 CET (Europe/Berlin)';
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:00:15' } }, window, BERLIN)).toEqual({ ok: false, message });
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:00:16' } }, window, BERLIN).ok).toBe(true);
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '15:10:25' } }, window, BERLIN).ok).toBe(true);
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '15:10:26' } }, window, BERLIN)).toEqual({ ok: false, message });
    // The same wall time read in New York is a different instant: after the window.
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:03:27' } }, window, NEW_YORK).ok).toBe(false);
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '08:03:27' } }, window, NEW_YORK)).toMatchObject({ ok: true, target: { type: 'time', time: '2026-12-06T08:03:27-05:00' } });
    expect(checkTarget({ type: 'time', wall: { date: '2026-12-06', time: '14:03:27' } }, null, BERLIN)).toMatchObject({ ok: false, message: expect.stringContaining('take a base backup') });
  });

  it('a window across the autumn change: a repeated hour takes its first instant and says so', () => {
    const autumn = { start: '2026-10-24T22:00:00Z', end: '2026-10-25T03:00:00Z' };
    const checked = checkTarget({ type: 'time', wall: { date: '2026-10-25', time: '02:30:00' } }, autumn, BERLIN);
    expect(checked).toMatchObject({ ok: true, target: { type: 'time', time: '2026-10-25T02:30:00+02:00' }, note: expect.stringContaining('happens twice') });
    expect(describeWindow(autumn, BERLIN)).toBe('2026-10-25 00:00:00 CEST – 2026-10-25 04:00:00 CET (Europe/Berlin)');
    const spring = { start: '2026-03-28T22:00:00Z', end: '2026-03-29T03:00:00Z' };
    expect(checkTarget({ type: 'time', wall: { date: '2026-03-29', time: '02:30:00' } }, spring, BERLIN)).toMatchObject({ ok: false, message: expect.stringContaining('does not exist in Europe/Berlin') });
  });

  it('latest, LSN and restore point names', () => {
    expect(checkTarget({ type: 'latest' }, null, BERLIN)).toMatchObject({ ok: true, target: { type: 'latest' } });
    expect(checkTarget({ type: 'position', position: ' 0/3000028 ' }, window, BERLIN)).toMatchObject({ ok: true, target: { type: 'position', position: '0/3000028' } });
    expect(checkTarget({ type: 'position', position: '3000028' }, window, BERLIN).ok).toBe(false);
    expect(checkTarget({ type: 'name', name: 'before-migration' }, window, BERLIN)).toMatchObject({ ok: true, target: { type: 'name', name: 'before-migration' } });
    expect(checkTarget({ type: 'name', name: '  ' }, window, BERLIN).ok).toBe(false);
  });

  it('target paths and serve ports', () => {
    expect(targetPathProblem('/restore/x')).toBeNull();
    expect(targetPathProblem('restore/x')).toContain('absolute');
    expect(targetPathProblem('')).toContain('Enter');
    expect(targetPathProblem('/restore/../etc')).toContain('..');
    expect(servePortProblem('')).toBeNull();
    expect(servePortProblem(55432)).toBeNull();
    expect(servePortProblem(80)).toContain('1024');
    expect(servePortProblem(70000)).toContain('65535');
  });

  it('the recovery point: green in time, amber past the threshold, red when not streaming', () => {
    expect(recoveryPointTone(12, 'streaming', 20)).toBe('green');
    expect(recoveryPointTone(25, 'streaming', 20)).toBe('yellow');
    expect(recoveryPointTone(null, 'streaming', 20)).toBe('yellow');
    expect(recoveryPointTone(5, 'retrying', 20)).toBe('red');
    expect(recoveryPointTone(5, 'stale', 20)).toBe('red');
    expect(describeAge(12)).toBe('12 s ago');
    expect(describeAge(245)).toBe('4 min 5 s ago');
    expect(describeAge(7_380)).toBe('2 h 3 min ago');
  });
});
