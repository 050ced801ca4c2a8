// The small decisions of the WAL stream that need no server: slot names, what a pg_receivewal exit means, where the
// data of a partial segment ends.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyReceiverExit } from '../src/internal/pitr/receiver.js';
import { slotNameFor } from '../src/internal/pitr/slot.js';
import { dataEndOf } from '../src/internal/pitr/spool.js';

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

describe('the data end of a partial segment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hf-wal-parts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the last non-zero byte rounded up to 8, or 0 for an empty segment', async () => {
    const file = join(dir, 'segment');
    const bytes = Buffer.alloc(1024 * 1024);
    writeFileSync(file, bytes);
    expect(await dataEndOf(file, bytes.length)).toBe(0);
    bytes[300_001] = 7; // in the second 256 KiB read from the end
    bytes[10] = 1;
    writeFileSync(file, bytes);
    expect(await dataEndOf(file, bytes.length)).toBe(300_008);
    bytes[bytes.length - 1] = 1;
    writeFileSync(file, bytes);
    expect(await dataEndOf(file, bytes.length)).toBe(bytes.length);
  });
});
