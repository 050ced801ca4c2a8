import { describe, expect, it } from 'vitest';
import { recoveryWindow, type WindowBase, type WindowPiece } from '../../src/pitr/recovery-window.js';
import { walNaming } from '../../src/pitr/log-naming.js';

const MiB16 = 16 * 1024 * 1024;
const t = (minute: number) => new Date(Date.UTC(2026, 11, 6, 3, minute));
const seg = (n: number, timeline = 1) => `${timeline.toString(16).toUpperCase().padStart(8, '0')}${Math.floor(n / 256).toString(16).toUpperCase().padStart(8, '0')}${(n % 256).toString(16).toUpperCase().padStart(8, '0')}`;
const piece = (n: number, minute: number, options: { partial?: boolean; timeline?: number } = {}): WindowPiece => ({
  name: seg(n, options.timeline),
  timeline: options.timeline ?? 1,
  partial: options.partial ?? false,
  coversUntil: t(minute),
  storedSize: 1000,
  plainSize: options.partial ? 4096 : MiB16,
});
const base = (id: string, startSegment: number, consistentMinute: number, timeline = 1): WindowBase => ({ executionId: id, startSegment: seg(startSegment, timeline), timeline, consistentAt: t(consistentMinute) });

describe('WAL segment names', () => {
  it('roll over from the last segment of a log id to the next log id (16 MiB segments: 256 per log id)', () => {
    const naming = walNaming();
    expect(naming.sequence('0000000100000000000000FF')! + 1).toBe(naming.sequence('000000010000000100000000'));
    expect(naming.name(naming.sequence('0000000100000000000000FF')! + 1, '0000000100000000000000FF')).toBe('000000010000000100000000');
    expect(naming.sequence('000000010000000000000100')).toBeNull();
    expect(naming.sequence('not-a-segment')).toBeNull();
  });

  it('use the segment size the server was initialised with (64 MiB: 64 per log id)', () => {
    const naming = walNaming(64 * 1024 * 1024);
    expect(naming.sequence('00000001000000000000003F')! + 1).toBe(naming.sequence('000000010000000100000000'));
  });
});

describe('the recoverable window', () => {
  const now = t(30);

  it('runs from the earliest base whose start segment is followed by unbroken log to the newest piece', () => {
    const result = recoveryWindow({
      kind: 'postgres-wal',
      bases: [base('b1', 3, 2), base('b2', 6, 8)],
      pieces: [3, 4, 5, 6, 7].map((n) => piece(n, n + 1)).concat(piece(8, 29, { partial: true })),
      now,
    });
    expect(result.window).toEqual({ start: t(2), end: t(29), baseExecutionId: 'b1', timeline: 1 });
    expect(result.gaps).toEqual([]);
    expect(result.segments).toBe(6);
    expect(result.storedBytes).toBe(6000);
    expect(result.recoveryPointSeconds).toBe(60);
  });

  it('a gap splits the window: it starts at the first base after the gap, and the gap is listed', () => {
    const result = recoveryWindow({
      kind: 'postgres-wal',
      bases: [base('before-gap', 3, 2), base('after-gap', 7, 9)],
      pieces: [3, 4, 7, 8, 9].map((n) => piece(n, n + 1)),
      now,
    });
    expect(result.gaps).toEqual([{ after: seg(4), next: seg(7), missing: 2 }]);
    expect(result.window).toEqual({ start: t(9), end: t(10), baseExecutionId: 'after-gap', timeline: 1 });
  });

  it('no window when the only base backup lies before a gap', () => {
    const result = recoveryWindow({ kind: 'postgres-wal', bases: [base('old', 3, 2)], pieces: [3, 4, 6].map((n) => piece(n, n + 1)), now });
    expect(result.window).toBeNull();
    expect(result.recoveryPointSeconds).toBeNull();
    expect(result.gaps).toEqual([{ after: seg(4), next: seg(6), missing: 1 }]);
  });

  it('a base backup not yet consistent at the newest archived instant does not open the window', () => {
    const result = recoveryWindow({ kind: 'postgres-wal', bases: [base('fresh', 4, 20)], pieces: [4, 5].map((n) => piece(n, n + 1)), now });
    expect(result.window).toBeNull();
  });

  it('a partial counts as the end only for the newest name; an older name with only a partial is a gap', () => {
    const result = recoveryWindow({
      kind: 'postgres-wal',
      bases: [base('b', 3, 3)],
      // Segment 5 never completed (only its partial was archived), then 6 and 7 did, and 8 is being written.
      pieces: [piece(3, 4), piece(4, 5), piece(5, 6, { partial: true }), piece(6, 7), piece(7, 8), piece(8, 9, { partial: true })],
      now,
    });
    expect(result.gaps).toEqual([{ after: seg(4), next: seg(6), missing: 1 }]);
    expect(result.window).toBeNull();
    const healed = recoveryWindow({ kind: 'postgres-wal', bases: [base('b', 3, 3)], pieces: [piece(3, 4), piece(4, 5), piece(5, 6), piece(5, 5, { partial: true })], now });
    // The completed segment 5 wins over its partial; the end is the completed segment's.
    expect(healed.window?.end).toEqual(t(6));
  });

  it('the window follows the log across a log id boundary', () => {
    const result = recoveryWindow({ kind: 'postgres-wal', bases: [base('b', 254, 1)], pieces: [254, 255, 256, 257].map((n, i) => piece(n, i + 2)), now });
    expect(result.gaps).toEqual([]);
    expect(result.window?.end).toEqual(t(5));
  });

  it('counts only the newest timeline (a switch ends the older one)', () => {
    const result = recoveryWindow({
      kind: 'postgres-wal',
      bases: [base('tl1', 3, 2, 1), base('tl2', 5, 12, 2)],
      pieces: [piece(3, 3), piece(4, 4), piece(5, 13, { timeline: 2 }), piece(6, 14, { timeline: 2 })],
      now,
    });
    expect(result.window).toEqual({ start: t(12), end: t(14), baseExecutionId: 'tl2', timeline: 2 });
  });

  it('MySQL binary logs are numbered one by one', () => {
    const binlog = (n: number, minute: number): WindowPiece => ({ name: `binlog.${String(n).padStart(6, '0')}`, timeline: 1, partial: false, coversUntil: t(minute), storedSize: 10, plainSize: 100 });
    const result = recoveryWindow({ kind: 'mysql-binlog', bases: [{ executionId: 'b', startSegment: 'binlog.000009', timeline: 1, consistentAt: t(1) }], pieces: [binlog(9, 2), binlog(10, 3), binlog(12, 4)], now });
    expect(result.gaps).toEqual([{ after: 'binlog.000010', next: 'binlog.000012', missing: 1 }]);
    expect(result.window).toBeNull();
  });
});
