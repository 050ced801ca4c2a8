// Issue 43: how the WAL stream dates a piece (flush-clock.ts). A piece ending at a position covers the newest reading
// at or below it, never less than an earlier piece claimed, and nothing when no reading is that low.
import { describe, expect, it } from 'vitest';
import { FlushClock } from '../src/internal/pitr/flush-clock.js';

describe('the flush clock of a WAL stream', () => {
  it('dates a piece by the newest reading its end reaches, not by when it was copied', () => {
    const clock = new FlushClock();
    clock.record({ at: 1000, lsn: 100n });
    clock.record({ at: 2000, lsn: 200n });
    clock.record({ at: 3000, lsn: 300n });
    // pg_receivewal behind the newest reading: the piece ends at 250, so only the reading of 200 is covered.
    expect(clock.coveredAt(250n)).toBe(2000);
    expect(clock.coveredAt(300n)).toBe(3000);
    expect(clock.lastClaim).toBe(3000);
  });

  it('never claims less than an earlier piece (a later piece holds everything an earlier one did)', () => {
    const clock = new FlushClock();
    clock.record({ at: 1000, lsn: 100n });
    clock.record({ at: 2000, lsn: 200n });
    expect(clock.coveredAt(200n)).toBe(2000);
    // A completed segment whose end no reading reached since: still at least what was claimed.
    expect(clock.coveredAt(150n)).toBe(2000);
  });

  it('claims nothing without a reading that low, unless a restarted stream remembers its last claim', () => {
    const fresh = new FlushClock();
    fresh.record({ at: 5000, lsn: 500n });
    expect(fresh.coveredAt(400n)).toBeUndefined();
    expect(fresh.lastClaim).toBeUndefined();
    const restarted = new FlushClock(4000);
    restarted.record({ at: 5000, lsn: 500n });
    expect(restarted.coveredAt(400n)).toBe(4000);
    expect(restarted.coveredAt(500n)).toBe(5000);
  });

  it('takes an older seed (the last checkpoint) recorded after newer readings', () => {
    const clock = new FlushClock();
    clock.record({ at: 9000, lsn: 900n });
    clock.record({ at: 1000, lsn: 50n });
    expect(clock.coveredAt(60n)).toBe(1000);
  });

  it('keeps a bounded number of readings, dropping the oldest', () => {
    const clock = new FlushClock();
    for (let i = 0; i < 2000; i++) clock.record({ at: i, lsn: BigInt(i) });
    expect(clock.coveredAt(10n)).toBeUndefined(); // long dropped
    expect(clock.coveredAt(1999n)).toBe(1999);
  });
});
