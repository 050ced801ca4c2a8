// Where the WAL in a copy of a partial segment really ends. pg_receivewal creates a partial zero-filled to the segment
// size and writes WAL from its start, and the copy may catch a record half written. The last non-zero byte is not the
// end: a record may itself end in zero bytes, and a half-written record is not WAL a restore can replay. So the file is
// read the way PostgreSQL reads it: page headers (a long one at the segment's start, short ones after), record headers
// (`xl_tot_len`, records 8-byte aligned, continued across pages with `xlp_rem_len`), each record's `xl_prev` pointing
// at the one before, and the last record's CRC-32C. The end is where the next record would start (the server's insert
// position after that record), so it compares with `pg_current_wal_insert_lsn()` readings (flush-clock.ts).
import { open, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';

// crc-32 ships CommonJS only; its crc32c module computes CRC-32C (Castagnoli), the checksum of WAL records.
const crc32c = createRequire(import.meta.url)('crc-32/crc32c') as { buf(data: Uint8Array, seed?: number): number };

const SHORT_PAGE_HEADER = 24;
const LONG_PAGE_HEADER = 40;
const RECORD_HEADER = 24;
/** `offsetof(XLogRecord, xl_crc)`: the header bytes the record's CRC covers, after its data. */
const RECORD_CRC_OFFSET = 20;
const XLP_FIRST_IS_CONTRECORD = 0x0001;
const XLP_LONG_HEADER = 0x0002;
/** Pages are read in chunks this big (a whole number of pages for every block size PostgreSQL allows). */
const CHUNK_BYTES = 1024 * 1024;

const align8 = (n: number) => Math.ceil(n / 8) * 8;

/** A partial segment's pages, read on demand a chunk at a time (a segment may be up to 1 GiB). */
class SegmentPages {
  private chunkStart = -1;
  private chunk = Buffer.alloc(0);

  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  /** `length` bytes at `offset`, all within one page; undefined past the file's end. */
  async bytes(offset: number, length: number): Promise<Buffer | undefined> {
    if (offset + length > this.size) return undefined;
    const start = Math.floor(offset / CHUNK_BYTES) * CHUNK_BYTES;
    if (start !== this.chunkStart) {
      const wanted = Math.min(CHUNK_BYTES, this.size - start);
      if (this.chunk.length < wanted) this.chunk = Buffer.alloc(CHUNK_BYTES);
      const { bytesRead } = await this.handle.read(this.chunk, 0, wanted, start);
      if (bytesRead < wanted) return undefined;
      this.chunkStart = start;
    }
    return this.chunk.subarray(offset - start, offset - start + length);
  }
}

/** What the segment's first page says about every page. */
interface SegmentLayout {
  magic: number;
  blockSize: number;
  startLsn: bigint;
}

/** A record whose bytes were all found in the file, and whether they are the record PostgreSQL wrote. */
interface WalkedRecord {
  start: number;
  end: number;
}

/**
 * The byte offset in `file` where its WAL ends: the aligned end of the last complete record whose checksum holds
 * (0 when the file holds none). `segmentStartLsn` is the LSN of the file's first byte (from its name); a file whose
 * first page does not say so is treated as holding nothing.
 */
export async function walDataEnd(file: string, size: number, segmentStartLsn: bigint): Promise<number> {
  const handle = await open(file, 'r');
  try {
    const pages = new SegmentPages(handle, size);
    const layout = await readLayout(pages, segmentStartLsn);
    if (!layout) return 0;
    return await walkToEnd(pages, layout);
  } finally {
    await handle.close();
  }
}

async function readLayout(pages: SegmentPages, startLsn: bigint): Promise<SegmentLayout | undefined> {
  const header = await pages.bytes(0, LONG_PAGE_HEADER);
  if (!header) return undefined;
  const info = header.readUInt16LE(2);
  if ((info & XLP_LONG_HEADER) === 0 || header.readBigUInt64LE(8) !== startLsn) return undefined;
  const blockSize = header.readUInt32LE(36);
  if (blockSize < 1024 || blockSize > 65536 || (blockSize & (blockSize - 1)) !== 0) return undefined;
  return { magic: header.readUInt16LE(0), blockSize, startLsn };
}

/** The page header at `pageStart` when it is this segment's (right magic and address); its size and fields. */
async function pageHeader(pages: SegmentPages, layout: SegmentLayout, pageStart: number): Promise<{ size: number; info: number; remaining: number } | undefined> {
  const header = await pages.bytes(pageStart, SHORT_PAGE_HEADER);
  if (!header) return undefined;
  if (header.readUInt16LE(0) !== layout.magic) return undefined;
  if (header.readBigUInt64LE(8) !== layout.startLsn + BigInt(pageStart)) return undefined;
  const info = header.readUInt16LE(2);
  return { size: pageStart === 0 ? LONG_PAGE_HEADER : SHORT_PAGE_HEADER, info, remaining: header.readUInt32LE(16) };
}

/**
 * Reads `length` logical bytes from `offset` (a position inside a page's data), across page headers. Each later page
 * must be this segment's and say it continues a record with exactly the bytes still due. Returns the bytes (only when
 * `keep`) and the position after them, or undefined when the file does not hold them all.
 */
async function readAcross(
  pages: SegmentPages,
  layout: SegmentLayout,
  offset: number,
  length: number,
  recordRemaining: number,
  keep: boolean,
): Promise<{ data: Buffer[]; end: number } | undefined> {
  const data: Buffer[] = [];
  let position = offset;
  let due = length;
  let recordDue = recordRemaining;
  while (due > 0) {
    if (position % layout.blockSize === 0) {
      // At a page's first byte: step over its header, which must announce the continuation.
      const header = await pageHeader(pages, layout, position);
      if (!header || (header.info & XLP_FIRST_IS_CONTRECORD) === 0 || header.remaining !== recordDue) return undefined;
      position += header.size;
      continue;
    }
    const pageEnd = (Math.floor(position / layout.blockSize) + 1) * layout.blockSize;
    const take = Math.min(due, pageEnd - position);
    const piece = await pages.bytes(position, take);
    if (!piece) return undefined;
    if (keep) data.push(Buffer.from(piece));
    position += take;
    due -= take;
    recordDue -= take;
  }
  return { data, end: position };
}

/** Walks the segment's records from its start; the aligned end of the last one that is whole and checks out. */
async function walkToEnd(pages: SegmentPages, layout: SegmentLayout): Promise<number> {
  const first = await pageHeader(pages, layout, 0);
  if (!first) return 0;
  // A record begun in the previous segment continues here first: its remaining bytes are not this segment's records.
  let position = LONG_PAGE_HEADER;
  if ((first.info & XLP_FIRST_IS_CONTRECORD) !== 0 && first.remaining > 0) {
    const skipped = await readAcross(pages, layout, position, first.remaining, first.remaining, false);
    if (!skipped) return 0;
    position = skipped.end;
  }
  position = align8(position);
  let previous: WalkedRecord | undefined;
  let newest: WalkedRecord | undefined;
  for (;;) {
    const record = await nextRecord(pages, layout, position, previous);
    if (!record) break;
    previous = newest = record;
    position = record.end;
  }
  if (!newest) return 0;
  // Every record before the newest was followed by a well-formed one; the newest could be the one caught half
  // written (its header and length in place, some of its data still zeros), so its checksum decides.
  return (await checksumHolds(pages, layout, newest)) ? newest.end : newest.start;
}

/** The record starting at `position` when its header is plausible and all its bytes are in the file. */
async function nextRecord(pages: SegmentPages, layout: SegmentLayout, position: number, previous: WalkedRecord | undefined): Promise<WalkedRecord | undefined> {
  let start = position;
  if (start % layout.blockSize === 0) {
    // A record never starts on a page's first byte: it starts after the header of a page that continues nothing.
    const header = await pageHeader(pages, layout, start);
    if (!header || (header.info & XLP_FIRST_IS_CONTRECORD) !== 0) return undefined;
    start += header.size;
  }
  const lengthBytes = await pages.bytes(start, 4);
  if (!lengthBytes) return undefined;
  const totalLength = lengthBytes.readUInt32LE(0);
  if (totalLength < RECORD_HEADER) return undefined; // zeros: nothing written here yet
  const whole = await readAcross(pages, layout, start, totalLength, totalLength, false);
  if (!whole) return undefined;
  const header = await recordHeader(pages, layout, start, totalLength);
  if (!header) return undefined;
  if (previous && header.readBigUInt64LE(8) !== layout.startLsn + BigInt(previous.start)) return undefined;
  return { start, end: align8(whole.end) };
}

/** The record's 24-byte header, which may itself continue on the next page. */
async function recordHeader(pages: SegmentPages, layout: SegmentLayout, start: number, totalLength: number): Promise<Buffer | undefined> {
  const header = await readAcross(pages, layout, start, RECORD_HEADER, totalLength, true);
  return header ? Buffer.concat(header.data) : undefined;
}

/** PostgreSQL's record checksum: CRC-32C of the record's data, then of its header up to `xl_crc`. */
async function checksumHolds(pages: SegmentPages, layout: SegmentLayout, record: WalkedRecord): Promise<boolean> {
  const lengthBytes = await pages.bytes(record.start, 4);
  if (!lengthBytes) return false;
  const totalLength = lengthBytes.readUInt32LE(0);
  const whole = await readAcross(pages, layout, record.start, totalLength, totalLength, true);
  if (!whole) return false;
  const bytes = Buffer.concat(whole.data);
  let crc = crc32c.buf(bytes.subarray(RECORD_HEADER));
  crc = crc32c.buf(bytes.subarray(0, RECORD_CRC_OFFSET), crc);
  return crc >>> 0 === bytes.readUInt32LE(RECORD_CRC_OFFSET);
}
