// PostgreSQL WAL positions and segment file names. An LSN is a 64-bit byte position in the write-ahead log, printed
// as two hex halves (`0/2000028`); WAL is cut into segments of `wal_segment_size` bytes (16 MiB by default), and
// the segment holding an LSN on a timeline is the file `TTTTTTTTXXXXXXXXYYYYYYYY`: the timeline, then the segment
// number split as "log" (bits above 32) and "seg" (the segments within one 4 GiB log), eight hex digits each.
// BigInt throughout: LSNs pass 2^53 on a busy server within years.

/** The default segment size (initdb --wal-segsize changes it; always a power of two from 1 MiB to 1 GiB). */
export const DEFAULT_WAL_SEGMENT_SIZE = 16 * 1024 * 1024;

const FOUR_GIB = 0x1_0000_0000n;

/** `0/2000028` -> 33554472n. Throws on anything else. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a PostgreSQL LSN (like 0/2000028)`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** 33554472n -> `0/2000028` (upper-case hex, no leading zeros, as the server prints it). */
export function formatLsn(lsn: bigint): string {
  if (lsn < 0n || lsn >= 1n << 64n) throw new Error(`LSN out of range: ${lsn}`);
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffff_ffffn).toString(16).toUpperCase()}`;
}

function assertSegmentSize(segmentSize: number): bigint {
  if (!Number.isInteger(segmentSize) || segmentSize < 1024 * 1024 || segmentSize > 1024 ** 3 || (segmentSize & (segmentSize - 1)) !== 0) {
    throw new Error(`WAL segment size ${segmentSize} is not a power of two between 1 MiB and 1 GiB`);
  }
  return BigInt(segmentSize);
}

const hex8 = (value: bigint | number) => value.toString(16).toUpperCase().padStart(8, '0');

/** The segment file name that holds `lsn` on `timeline` (the server's `pg_walfile_name`). */
export function segmentNameFor(lsn: bigint, timeline: number, segmentSize = DEFAULT_WAL_SEGMENT_SIZE): string {
  const size = assertSegmentSize(segmentSize);
  const segmentsPerLog = FOUR_GIB / size;
  const segment = lsn / size;
  return `${hex8(timeline)}${hex8(segment / segmentsPerLog)}${hex8(segment % segmentsPerLog)}`;
}

/** A parsed segment file name. */
export interface SegmentName {
  timeline: number;
  /** Segment number from the start of the log (LSN / segment size). */
  segment: bigint;
}

const SEGMENT_NAME = /^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$/;

/** True for a complete segment's file name (24 upper-case hex digits, no suffix). */
export function isSegmentName(name: string): boolean {
  return SEGMENT_NAME.test(name);
}

/** `000000010000000000000003` -> timeline 1, segment 3. Throws for a name that is not a segment's. */
export function parseSegmentName(name: string, segmentSize = DEFAULT_WAL_SEGMENT_SIZE): SegmentName {
  const match = SEGMENT_NAME.exec(name);
  if (!match) throw new Error(`"${name}" is not a WAL segment name`);
  const segmentsPerLog = FOUR_GIB / assertSegmentSize(segmentSize);
  const seg = BigInt(`0x${match[3]}`);
  if (seg >= segmentsPerLog) throw new Error(`"${name}" is not a WAL segment name for ${segmentSize}-byte segments`);
  return { timeline: Number.parseInt(match[1]!, 16), segment: BigInt(`0x${match[2]}`) * segmentsPerLog + seg };
}

/** The LSN at which segment `name` starts. */
export function segmentStartLsn(name: string, segmentSize = DEFAULT_WAL_SEGMENT_SIZE): bigint {
  return parseSegmentName(name, segmentSize).segment * BigInt(segmentSize);
}

/** The name of the segment after `name` on the same timeline (crossing from `…000000FF` to the next log). */
export function nextSegmentName(name: string, segmentSize = DEFAULT_WAL_SEGMENT_SIZE): string {
  const { timeline, segment } = parseSegmentName(name, segmentSize);
  return segmentNameFor((segment + 1n) * BigInt(segmentSize), timeline, segmentSize);
}

/** `16MB`, `1GB`, `16384kB` (SHOW wal_segment_size) -> bytes. */
export function parseSizeSetting(text: string): number {
  const match = /^(\d+)\s*(B|kB|MB|GB)?$/.exec(text.trim());
  if (!match) throw new Error(`cannot read the size "${text}"`);
  const unit = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[(match[2] ?? 'B') as 'B' | 'kB' | 'MB' | 'GB'];
  return Number(match[1]) * unit;
}
