// LSNs and WAL segment names, checked against what PostgreSQL itself prints (pg_walfile_name, pg_basebackup's
// backup_label) for 16 MiB segments and against the arithmetic for other segment sizes.
import { describe, expect, it } from 'vitest';
import {
  formatLsn,
  isSegmentName,
  nextSegmentName,
  parseLsn,
  parseSegmentName,
  parseSizeSetting,
  segmentNameFor,
  segmentStartLsn,
} from '../src/internal/pitr/wal-names.js';

describe('LSN text', () => {
  it('parses and prints the server form both ways', () => {
    expect(parseLsn('0/2000028')).toBe(0x2000028n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(0x2000028n)).toBe('0/2000028');
    expect(formatLsn((0x16n << 32n) | 0xb374d848n)).toBe('16/B374D848');
    expect(formatLsn(parseLsn('ffffffff/ffffffff'))).toBe('FFFFFFFF/FFFFFFFF');
  });

  it('refuses what is not an LSN', () => {
    expect(() => parseLsn('0x2000028')).toThrow(/not a PostgreSQL LSN/);
    expect(() => parseLsn('1/2/3')).toThrow(/not a PostgreSQL LSN/);
    expect(() => parseLsn('123456789/0')).toThrow(/not a PostgreSQL LSN/);
  });
});

describe('segment names (16 MiB segments)', () => {
  it('names the segment of an LSN as pg_walfile_name does', () => {
    // backup_label of the test cluster: START WAL LOCATION: 0/2000028 (file 000000010000000000000002)
    expect(segmentNameFor(parseLsn('0/2000028'), 1)).toBe('000000010000000000000002');
    expect(segmentNameFor(parseLsn('0/FFFFFFF'), 1)).toBe('00000001000000000000000F');
    // The 256th segment of a 4 GiB "log" is the first of the next one.
    expect(segmentNameFor(parseLsn('1/0'), 1)).toBe('000000010000000100000000');
    expect(segmentNameFor(parseLsn('16/B374D848'), 3)).toBe('0000000300000016000000B3');
  });

  it('parses a name back to its start and steps to the next segment across a log boundary', () => {
    expect(parseSegmentName('0000000300000016000000B3')).toEqual({ timeline: 3, segment: 0x16n * 256n + 0xb3n });
    expect(formatLsn(segmentStartLsn('0000000300000016000000B3'))).toBe('16/B3000000');
    expect(nextSegmentName('000000010000000000000003')).toBe('000000010000000000000004');
    expect(nextSegmentName('0000000100000000000000FF')).toBe('000000010000000100000000');
  });

  it('tells segment names from other files of a WAL folder', () => {
    expect(isSegmentName('000000010000000000000003')).toBe(true);
    expect(isSegmentName('000000010000000000000003.partial')).toBe(false);
    expect(isSegmentName('00000002.history')).toBe(false);
    expect(isSegmentName('00000001000000000000000a')).toBe(false);
    expect(() => parseSegmentName('000000010000000000000100')).toThrow(/not a WAL segment name/);
  });
});

describe('other segment sizes (initdb --wal-segsize)', () => {
  it('uses the segment size for both halves of the name', () => {
    const oneGiB = 1024 ** 3;
    expect(segmentNameFor(parseLsn('0/C0000000'), 1, oneGiB)).toBe('000000010000000000000003');
    expect(nextSegmentName('000000010000000000000003', oneGiB)).toBe('000000010000000100000000');
    const oneMiB = 1024 ** 2;
    expect(segmentNameFor(parseLsn('1/100000'), 2, oneMiB)).toBe('000000020000000100000001');
    expect(() => segmentNameFor(0n, 1, 3 * 1024 * 1024)).toThrow(/power of two/);
  });

  it('reads SHOW wal_segment_size', () => {
    expect(parseSizeSetting('16MB')).toBe(16 * 1024 * 1024);
    expect(parseSizeSetting('1GB')).toBe(1024 ** 3);
    expect(parseSizeSetting('16384kB')).toBe(16 * 1024 * 1024);
    expect(() => parseSizeSetting('sixteen')).toThrow(/cannot read/);
  });
});
