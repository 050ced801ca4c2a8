// The small decisions of the WAL stream that need no server: slot names, what a pg_receivewal exit means, where the
// WAL of a partial segment ends (synthetic pages here; pitr-wal-end.test.ts reads real WAL against pg_waldump).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyReceiverExit } from '../src/internal/pitr/receiver.js';
import { slotNameFor } from '../src/internal/pitr/slot.js';
import { walDataEnd } from '../src/internal/pitr/wal-end.js';

const crc32c = createRequire(import.meta.url)('crc-32/crc32c') as { buf(data: Uint8Array, seed?: number): number };

describe('slot names', () => {
  it('are holdfast_ plus the stream id in [a-z0-9_], at most 63 characters, distinct for long ids', () => {
    expect(slotNameFor('job-1')).toBe('holdfast_job_1');
    expect(slotNameFor('3F2504E0-4F89-11D3-9A0C-0305E82C3301')).toBe('holdfast_3f2504e0_4f89_11d3_9a0c_0305e82c3301');
    const long = 'x'.repeat(80);
    expect(slotNameFor(long)).toHaveLength(63);
    expect(slotNameFor(long)).toMatch(/^holdfast_x+_[0-9a-f]{8}$/);
    expect(slotNameFor(`${long}a`)).not.toBe(slotNameFor(`${long}b`));
    expect(slotNameFor('x'.repeat(54))).toBe(`holdfast_${'x'.repeat(54)}`); // exactly 63: kept whole
  });
});

describe('pg_receivewal exits', () => {
  it('are told apart by their messages (PostgreSQL 15 wording)', () => {
    expect(classifyReceiverExit('pg_receivewal: error: could not send replication command "START_REPLICATION": ERROR:  replication slot "holdfast_a" does not exist')).toBe('slot-missing');
    expect(classifyReceiverExit('pg_receivewal: error: could not send replication command "START_REPLICATION": ERROR:  replication slot "holdfast_a" is active for PID 4321')).toBe('slot-busy');
    expect(classifyReceiverExit('pg_receivewal: error: unexpected termination of replication stream: ERROR:  requested WAL segment 000000010000000000000092 has already been removed')).toBe('wal-removed');
    expect(classifyReceiverExit('pg_receivewal: error: connection to server at "127.0.0.1", port 5433 failed: FATAL:  password authentication failed for user "x"')).toBe('refused');
    expect(classifyReceiverExit('FATAL:  no pg_hba.conf entry for replication connection from host "127.0.0.1", user "x", no encryption')).toBe('refused');
    expect(classifyReceiverExit('FATAL:  must be superuser or replication role to start walsender')).toBe('refused');
    expect(classifyReceiverExit('pg_receivewal: error: unexpected termination of replication stream: FATAL:  terminating connection due to administrator command')).toBe('transient');
    expect(classifyReceiverExit('pg_receivewal: error: connection to server at "127.0.0.1", port 5433 failed: Connection refused')).toBe('transient');
    // A local folder it cannot write is not a refusal by the server.
    expect(classifyReceiverExit('pg_receivewal: error: could not open file "/spool/000000010000000000000003.partial": Permission denied')).toBe('transient');
  });
});

/** A synthetic segment of 8 KiB pages: records of the given total lengths, chained and checksummed like PostgreSQL's. */
function syntheticSegment(options: { startLsn: bigint; pages: number; continued?: number; records: number[] }): { bytes: Buffer; ends: number[] } {
  const block = 8192;
  const bytes = Buffer.alloc(block * options.pages);
  const pageHeader = (page: number, remaining: number) => {
    const at = page * block;
    bytes.writeUInt16LE(0xd110, at);
    bytes.writeUInt16LE((remaining > 0 ? 0x0001 : 0) | (page === 0 ? 0x0002 : 0), at + 2);
    bytes.writeUInt32LE(1, at + 4);
    bytes.writeBigUInt64LE(options.startLsn + BigInt(at), at + 8);
    bytes.writeUInt32LE(remaining, at + 16);
    if (page === 0) {
      bytes.writeUInt32LE(16 * 1024 * 1024, at + 32);
      bytes.writeUInt32LE(block, at + 36);
    }
    return at + (page === 0 ? 40 : 24);
  };
  /** Lays `data` out from `position`, page headers in between; returns the position after it. */
  const lay = (position: number, data: Buffer) => {
    let at = position;
    for (let i = 0; i < data.length; ) {
      if (at % block === 0) at = pageHeader(at / block, data.length - i);
      const take = Math.min(data.length - i, block - (at % block));
      data.copy(bytes, at, i, i + take);
      at += take;
      i += take;
    }
    return at;
  };
  let position = pageHeader(0, options.continued ?? 0);
  if (options.continued) position = lay(position, Buffer.alloc(options.continued, 0x5a));
  position = Math.ceil(position / 8) * 8;
  const ends: number[] = [];
  let previous = 0n;
  for (const total of options.records) {
    if (position % block === 0) position = pageHeader(position / block, 0);
    const record = Buffer.alloc(total, 0);
    record.writeUInt32LE(total, 0);
    record.writeBigUInt64LE(previous, 8);
    for (let i = 24; i < total - 8; i++) record[i] = (i * 31) & 0xff; // the last 8 data bytes stay zero
    let crc = crc32c.buf(record.subarray(24));
    crc = crc32c.buf(record.subarray(0, 20), crc);
    record.writeUInt32LE(crc >>> 0, 20);
    previous = options.startLsn + BigInt(position);
    position = Math.ceil(lay(position, record) / 8) * 8;
    ends.push(position);
  }
  return { bytes, ends };
}

describe('the end of the WAL in a partial segment (synthetic pages)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hf-wal-parts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const startLsn = 0x3000000n;

  async function endOf(bytes: Buffer): Promise<number> {
    const file = join(dir, 'segment');
    writeFileSync(file, bytes);
    return walDataEnd(file, bytes.length, startLsn);
  }

  it('follows records across pages, a continuation at the segment start and a header split by a page boundary', async () => {
    // 100 bytes of a record begun in the previous segment; the first record starts at 144 and its 8032 bytes leave 16
    // on page 0, so the next record's 24-byte header is split across pages 0 and 1.
    const { bytes, ends } = syntheticSegment({ startLsn, pages: 4, continued: 100, records: [8032, 200, 9000, 64] });
    expect(ends[0]! % 8192).toBe(8192 - 16); // the split: 16 bytes left on page 0
    expect(await endOf(bytes)).toBe(ends.at(-1));
  });

  it('ends at a record whose data ends in zeros, not at its last non-zero byte; stops before a torn or corrupt one', async () => {
    const { bytes, ends } = syntheticSegment({ startLsn, pages: 2, records: [120, 64, 3000] });
    expect(await endOf(bytes)).toBe(ends[2]);
    const torn = Buffer.from(bytes);
    torn.fill(0, ends[1]! + 1000, ends[2]!); // the copy caught the last record half written
    expect(await endOf(torn)).toBe(ends[1]);
    const corrupt = Buffer.from(bytes);
    corrupt[ends[0]! + 30] ^= 1; // the middle record's data; the next one still points back to it
    expect(await endOf(corrupt)).toBe(ends[2]); // only the newest record's checksum is checked: earlier ones were followed by valid ones
    const wrongSegment = Buffer.from(bytes);
    wrongSegment.writeBigUInt64LE(startLsn + 16n * 1024n * 1024n, 8);
    expect(await endOf(wrongSegment)).toBe(0);
    expect(await endOf(Buffer.alloc(8192))).toBe(0);
  });

  it('ends exactly on a page boundary when a record fills its page, and a broken chain ends the walk', async () => {
    const { bytes, ends } = syntheticSegment({ startLsn, pages: 3, records: [8152, 100] });
    expect(ends[0]).toBe(8192);
    expect(await endOf(bytes.subarray(0, 8192 * 3))).toBe(ends[1]);
    const unwrittenNext = Buffer.from(bytes);
    unwrittenNext.fill(0, 8192); // the next page not received yet
    expect(await endOf(unwrittenNext)).toBe(8192);
    const brokenChain = Buffer.from(bytes);
    brokenChain.writeBigUInt64LE(startLsn, 8192 + 24 + 8); // xl_prev of the second record points elsewhere
    expect(await endOf(brokenChain)).toBe(8192);
  });
});
