import { describe, expect, it } from 'vitest';
import { objectLockRetainUntil } from '../src/object-lock-date.js';

const periods = { objectLockDays: 30, objectLockMarginDays: 1 };
const now = new Date('2026-12-06T12:00:00.000Z');

describe('objectLockRetainUntil', () => {
  it('adds the margin to the policy date', () => {
    expect(objectLockRetainUntil(new Date('2026-12-13T00:00:00.000Z'), periods, now).toISOString()).toBe('2026-12-14T00:00:00.000Z');
  });

  it('without a policy date, counts objectLockDays from now (no margin)', () => {
    expect(objectLockRetainUntil(undefined, periods, now).toISOString()).toBe('2027-01-05T12:00:00.000Z');
  });

  it('returns a past date as it is (callers refuse it)', () => {
    expect(objectLockRetainUntil(new Date('2026-01-01T00:00:00.000Z'), { ...periods, objectLockMarginDays: 0 }, now).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});
