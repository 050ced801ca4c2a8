// The kit's --target-gtid search without a server: binary log files built event by event (MariaDB's layout: a GTID
// event of sequence, domain and flags; Query events with their fixed part, status variables and database; XID; a
// 4-byte checksum at each event's end) so every way a transaction ends, and every refusal, is checked at exact
// offsets. The real restore to a GTID is in plugins/engine/test/codec/recovery-kit-mysql-pitr.test.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const binlog = await import(new URL('../kit/mysql-binlog.mjs', import.meta.url).href);
const dir = await mkdtemp(join(tmpdir(), 'hf-kit-gtid-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const SERVER = 1;

/** One event: header (time, type, server id, length, next position, flags), body, checksum. */
function event(type: number, body: Buffer, serverId = SERVER): Buffer {
  const length = 19 + body.length + 4;
  const header = Buffer.alloc(19);
  header.writeUInt32LE(1_765_000_000, 0);
  header[4] = type;
  header.writeUInt32LE(serverId, 5);
  header.writeUInt32LE(length, 9);
  return Buffer.concat([header, body, Buffer.alloc(4)]);
}

function gtidEvent(domain: number, sequence: bigint, flags = 0, serverId = SERVER): Buffer {
  const body = Buffer.alloc(19);
  body.writeBigUInt64LE(sequence, 0);
  body.writeUInt32LE(domain, 8);
  body[12] = flags;
  return event(162, body, serverId);
}

function queryEvent(statement: string, database = 'shop'): Buffer {
  const fixed = Buffer.alloc(13);
  const status = Buffer.from([0x00, 0x00, 0x00, 0x00, 0x00]); // five bytes of status variables
  fixed[8] = database.length;
  fixed.writeUInt16LE(status.length, 11);
  return event(2, Buffer.concat([fixed, status, Buffer.from(database), Buffer.from([0]), Buffer.from(statement)]));
}

const xidEvent = () => event(16, Buffer.alloc(8));
const rowsEvent = () => event(30, Buffer.alloc(40, 7));

/** Events laid out in a file; answers each event's start and end. */
async function writeLog(name: string, events: Buffer[]): Promise<{ file: { name: string; file: string; bytes: number }; at: Array<{ start: number; end: number }> }> {
  const at: Array<{ start: number; end: number }> = [];
  let offset = 4;
  for (const one of events) {
    at.push({ start: offset, end: offset + one.length });
    offset += one.length;
  }
  const path = join(dir, name);
  await writeFile(path, Buffer.concat([Buffer.from([0xfe, 0x62, 0x69, 0x6e]), ...events]));
  return { file: { name, file: path, bytes: offset }, at };
}

describe('finding where a GTID transaction ends (--target-gtid)', () => {
  it('ends after XID, after COMMIT, after a standalone DDL, and at the next GTID when no end came', async () => {
    const first = await writeLog('mysql-bin.000001', [
      event(15, Buffer.alloc(80)), // format description (not read)
      gtidEvent(0, 5n), queryEvent('BEGIN'), event(19, Buffer.alloc(20)), rowsEvent(), xidEvent(), // 1-5: 0-1-5
      gtidEvent(0, 6n, 1), queryEvent('CREATE TABLE t (id INT)'), // 6-7: 0-1-6 standalone
      gtidEvent(3, 7n), queryEvent('BEGIN'), queryEvent('INSERT INTO t VALUES (1)'), queryEvent('COMMIT'), // 8-11: 3-1-7 (MyISAM-like)
      gtidEvent(0, 8n, 0, 2), queryEvent('BEGIN'), rowsEvent(), // 12-14: 0-2-8, never ended
      gtidEvent(0, 9n), queryEvent('BEGIN'), rowsEvent(), xidEvent(), // 15-18: 0-1-9
    ]);
    const second = await writeLog('mysql-bin.000002', [event(15, Buffer.alloc(80)), gtidEvent(0, 10n), queryEvent('BEGIN'), rowsEvent(), xidEvent()]);
    const files = [first.file, second.file];
    const start = { file: 'mysql-bin.000001', offset: first.at[1]!.start };
    const end = (text: string) => binlog.findGtidEnd(files, start, binlog.parseGtid(text));
    await expect(end('0-1-5')).resolves.toEqual({ index: 0, offset: first.at[5]!.end });
    await expect(end('0-1-6')).resolves.toEqual({ index: 0, offset: first.at[7]!.end });
    await expect(end('3-1-7')).resolves.toEqual({ index: 0, offset: first.at[11]!.end });
    await expect(end('0-2-8')).resolves.toEqual({ index: 0, offset: first.at[15]!.start });
    await expect(end('0-1-9')).resolves.toEqual({ index: 0, offset: first.at[18]!.end });
    await expect(end('0-1-10')).resolves.toEqual({ index: 1, offset: second.at[4]!.end });
    // The server id is part of the GTID: 0-1-8 was never logged (0-2-8 was).
    await expect(end('0-1-8')).rejects.toThrow(/GTID 0-1-8 is not in the binary log from this base backup's start \(mysql-bin\.000001:\d+\) to the end of mysql-bin\.000002 \(domain 0 goes up to sequence 10\)/);
  });

  it('refuses a GTID before the base, one never logged, an unknown domain and a transaction cut off, with exit 8', async () => {
    const log = await writeLog('mysql-bin.000003', [gtidEvent(0, 20n), queryEvent('BEGIN'), rowsEvent(), xidEvent(), gtidEvent(0, 21n), queryEvent('BEGIN'), rowsEvent(), xidEvent(), gtidEvent(0, 22n), queryEvent('BEGIN'), rowsEvent()]);
    const files = [log.file];
    const start = { file: 'mysql-bin.000003', offset: log.at[4]!.start };
    const refusal = async (text: string) => binlog.findGtidEnd(files, start, binlog.parseGtid(text)).then(() => undefined, (error: { exitCode: number; message: string }) => error);
    expect(await refusal('0-1-20')).toMatchObject({ exitCode: 8, message: expect.stringMatching(/GTID 0-1-20 was logged at mysql-bin\.000003:4, before this base backup starts/) });
    expect(await refusal('0-1-19')).toMatchObject({ exitCode: 8, message: expect.stringMatching(/domain 0 begins at sequence 21: it was logged before this base/) });
    expect(await refusal('0-1-23')).toMatchObject({ exitCode: 8, message: expect.stringMatching(/domain 0 goes up to sequence 22/) });
    expect(await refusal('9-1-1')).toMatchObject({ exitCode: 8, message: expect.stringMatching(/no transaction of domain 9 is there/) });
    expect(await refusal('0-1-22')).toMatchObject({ exitCode: 8, message: expect.stringMatching(/the transaction of GTID 0-1-22 is not whole in mysql-bin\.000003/) });
  });

  it('takes one MariaDB GTID and refuses the rest with exit 2', () => {
    expect(binlog.parseGtid('0-1-352')).toEqual({ domain: 0, serverId: 1, sequence: 352n, text: '0-1-352' });
    for (const [text, says] of [
      ['0-1', /one MariaDB GTID/],
      ['0-1-2,0-1-3', /one MariaDB GTID/],
      ['3E11FA47-71CA-11E1-9E33-C80AA9429562:23', /MySQL's form/],
      ['0-1-0', /out of range/],
      ['4294967296-1-1', /out of range/],
    ] as const) {
      expect(() => binlog.parseGtid(text)).toThrow(says);
      try {
        binlog.parseGtid(text);
      } catch (error) {
        expect((error as { exitCode: number }).exitCode).toBe(2);
      }
    }
  });
});
