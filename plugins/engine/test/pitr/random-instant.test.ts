// The random instant a point-in-time test restore restores to: uniform over the whole window, both ends included.
import { describe, expect, it } from 'vitest';
import { randomInstant } from '../../src/pitr/test-restore/random-instant.js';

const start = new Date('2026-12-06T10:00:00.000Z');
const end = new Date('2026-12-06T10:00:10.000Z');

describe('randomInstant', () => {
  it('maps the lowest and highest pick to the window ends, to the millisecond', () => {
    expect(randomInstant({ start, end }, () => 0).toISOString()).toBe('2026-12-06T10:00:00.000Z');
    expect(randomInstant({ start, end }, (bound) => bound - 1).toISOString()).toBe('2026-12-06T10:00:10.000Z');
    expect(randomInstant({ start, end }, () => 1234).toISOString()).toBe('2026-12-06T10:00:01.234Z');
  });

  it('asks for a pick below the window width plus one', () => {
    const bounds: number[] = [];
    randomInstant({ start, end }, (bound) => (bounds.push(bound), 0));
    expect(bounds).toEqual([10_001]);
  });

  it('has exactly one instant in a window of one instant', () => {
    expect(randomInstant({ start, end: start }).getTime()).toBe(start.getTime());
  });

  it('refuses a window that ends before it starts, and a pick outside the bound', () => {
    expect(() => randomInstant({ start: end, end: start })).toThrow(/holds no instant/);
    expect(() => randomInstant({ start, end }, (bound) => bound)).toThrow(/outside/);
    expect(() => randomInstant({ start, end }, () => 0.5)).toThrow(/outside/);
  });

  it('spreads instants uniformly over the window (crypto random)', () => {
    const samples = Array.from({ length: 4_000 }, () => randomInstant({ start, end }).getTime() - start.getTime());
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThanOrEqual(10_000);
    // Four equal quarters each get about 1 000 samples; 800 is more than 6 standard deviations (27) below.
    const quarters = [0, 0, 0, 0];
    for (const sample of samples) quarters[Math.min(3, Math.floor(sample / 2_500))]! += 1;
    for (const count of quarters) expect(count).toBeGreaterThan(800);
    const mean = samples.reduce((sum, sample) => sum + sample, 0) / samples.length;
    expect(Math.abs(mean - 5_000)).toBeLessThan(300);
  });
});
