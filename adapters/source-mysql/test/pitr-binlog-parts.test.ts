// The binary log stream's pure parts, on hand-made event bytes: names and their order, the event walk that cuts a
// partial copy after its last whole event, and the choice of the topped-up events that continue a copy exactly.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BINLOG_MAGIC, scanEvents } from '../src/internal/pitr/binlog-events.js';
import { binlogAfter, binlogNumber, byBinlogNumber, isBinlogName } from '../src/internal/pitr/binlog-names.js';
import { replicaServerIdFor } from '../src/internal/pitr/binlog-tool.js';
import { followingEvents } from '../src/internal/pitr/binlog-topup.js';
import { CoordinatesWatcher } from '../src/internal/pitr/logical-base.js';

const work = mkdtempSync(join(tmpdir(), 'hf-binlog-parts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** One event: 19-byte header (time, type, server id, length, end position, flags) and a body. */
function event(seconds: number, type: number, endPosition: number, body: number, flags = 0): Buffer {
  const bytes = Buffer.alloc(19 + body, 0xab);
  bytes.writeUInt32LE(seconds, 0);
  bytes.writeUInt8(type, 4);
  bytes.writeUInt32LE(1, 5);
  bytes.writeUInt32LE(19 + body, 9);
  bytes.writeUInt32LE(endPosition, 13);
  bytes.writeUInt16LE(flags, 17);
  return bytes;
}

describe('binary log names', () => {
  it('orders by number, past six digits, and names the next file', () => {
    expect(isBinlogName('mysql-bin.000042')).toBe(true);
    expect(isBinlogName('mysql-bin.index')).toBe(false);
    expect(isBinlogName('.ready')).toBe(false);
    expect(binlogNumber('mysql-bin.1000000')).toBe(1_000_000);
    expect(['b.1000000', 'b.999999', 'b.000002'].sort(byBinlogNumber)).toEqual(['b.000002', 'b.999999', 'b.1000000']);
    expect(binlogAfter('mysql-bin.000009')).toBe('mysql-bin.000010');
    expect(binlogAfter('mysql-bin.999999')).toBe('mysql-bin.1000000');
  });

  it('gives each stream a stable replica server id above the usual small ones', () => {
    expect(replicaServerIdFor('job-a')).toBe(replicaServerIdFor('job-a'));
    expect(replicaServerIdFor('job-a')).not.toBe(replicaServerIdFor('job-b'));
    for (const id of ['a', 'job-1', 'x'.repeat(300)]) {
      expect(replicaServerIdFor(id)).toBeGreaterThanOrEqual(2_000_000_000);
      expect(replicaServerIdFor(id)).toBeLessThan(4_294_967_296);
    }
  });
});

describe('event walk', () => {
  it('stops after the last whole event, resumes from an earlier walk, and keeps the newest time', async () => {
    const first = event(1000, 15, 4 + 119, 100);
    const second = event(1005, 2, 4 + 119 + 69, 50);
    const third = event(1003, 16, 4 + 119 + 69 + 50, 31);
    const file = join(work, 'walk.000001');
    const whole = Buffer.concat([BINLOG_MAGIC, first, second, third]);
    // The third event is cut: only two are whole.
    writeFileSync(file, whole.subarray(0, whole.length - 10));
    const partly = await scanEvents(file, whole.length - 10);
    expect(partly).toEqual({ end: 4 + first.length + second.length, newestSeconds: 1005, events: 2 });
    writeFileSync(file, whole);
    const resumed = await scanEvents(file, whole.length, partly);
    expect(resumed).toEqual({ end: whole.length, newestSeconds: 1005, events: 3 });
  });

  it('refuses a file without the magic bytes', async () => {
    const file = join(work, 'bad.000001');
    writeFileSync(file, Buffer.concat([Buffer.from('nope'), event(1, 2, 50, 10)]));
    await expect(scanEvents(file, 33)).rejects.toThrow(/not a binary log/);
  });
});

describe('top-up: events that continue a copy', () => {
  it('skips the made-up format description and takes the events that follow on exactly, up to a cut one', () => {
    const end = 500;
    const madeUp = event(0, 15, 0, 100); // what the server sends first when a read starts past byte 4
    const a = event(2000, 2, end + 60, 41);
    const b = event(2001, 16, end + 60 + 31, 12);
    const cut = event(2002, 2, end + 60 + 31 + 40, 21).subarray(0, 25);
    const fetched = Buffer.concat([BINLOG_MAGIC, madeUp, a, b, cut]);
    const range = followingEvents(fetched, end);
    expect(fetched.subarray(range.from, range.to)).toEqual(Buffer.concat([a, b]));
    expect(range.newestSeconds).toBe(2001);
  });

  it('takes nothing when the first event does not start where the copy ends', () => {
    const fetched = Buffer.concat([BINLOG_MAGIC, event(0, 15, 0, 100), event(2000, 2, 900, 41)]);
    expect(followingEvents(fetched, 500)).toEqual({ from: 0, to: 0, newestSeconds: 0 });
  });
});

describe('coordinates watcher', () => {
  it('finds the CHANGE MASTER line across chunks, passing every byte on', async () => {
    const watcher = new CoordinatesWatcher();
    const script = "-- header\n-- SET GLOBAL gtid_slave_pos='0-1-42';\n-- CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000007', MASTER_LOG_POS=1234;\nINSERT ...";
    const out: Buffer[] = [];
    watcher.on('data', (chunk: Buffer) => out.push(chunk));
    const cut = script.indexOf('MASTER_LOG_POS') + 5;
    watcher.write(Buffer.from(script.slice(0, cut)));
    watcher.end(Buffer.from(script.slice(cut)));
    await new Promise((resolve) => watcher.on('end', resolve));
    expect(Buffer.concat(out).toString()).toBe(script);
    expect(watcher.found).toMatchObject({ file: 'mysql-bin.000007', position: 1234 });
  });
});
