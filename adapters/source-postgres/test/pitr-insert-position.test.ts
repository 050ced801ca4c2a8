// Issue 43: the insert position a WAL piece is dated against (insert-position.ts). pg_current_wal_insert_lsn() points
// just past a page header when the last record ended on the page boundary; a copy's last whole record ends at the
// boundary, so the reading is moved back there, and nowhere else.
import { describe, expect, it } from 'vitest';
import { insertPositionAsRecordEnd } from '../src/internal/pitr/insert-position.js';

const BLOCK = 8192;
const SEGMENT = 16 * 1024 * 1024;
const segmentStart = 3n * BigInt(SEGMENT);

describe('the insert position as a record end', () => {
  it('moves a position just past a segment\'s long page header back to the segment start', () => {
    expect(insertPositionAsRecordEnd(segmentStart + 40n, BLOCK, SEGMENT)).toBe(segmentStart);
  });

  it('moves a position just past a short page header back to the page boundary', () => {
    expect(insertPositionAsRecordEnd(segmentStart + 5n * 8192n + 24n, BLOCK, SEGMENT)).toBe(segmentStart + 5n * 8192n);
  });

  it('leaves every other position alone, including offset 24 of a page inside a larger block', () => {
    expect(insertPositionAsRecordEnd(segmentStart + 8192n + 64n, BLOCK, SEGMENT)).toBe(segmentStart + 8192n + 64n);
    expect(insertPositionAsRecordEnd(segmentStart + 8192n + 24n, 16384, SEGMENT)).toBe(segmentStart + 8192n + 24n);
    expect(insertPositionAsRecordEnd(segmentStart + 16384n + 24n, 16384, SEGMENT)).toBe(segmentStart + 16384n);
  });
});
