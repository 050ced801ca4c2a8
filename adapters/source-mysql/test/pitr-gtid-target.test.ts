// Issue 44 scope 3: a point-in-time restore to a GTID on the MariaDB PITR test server (127.0.0.1:3307). Every write
// after the base records the GTID the server gave its transaction (@@last_gtid after the commit) and the table's rows
// right after it; a restore to one GTID must hold exactly those rows: its own transaction in, nothing logged after it.
// Writes include a transaction of several statements, a DDL (a standalone GTID), transactions of a second domain and a
// binary log rotation. Other test files write to this server at the same time: only this file's databases are read.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2/promise';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type BaseBackupInfo, type BaseBackupStats, type PointInTimeSupport, type PointRestoreInput } from '@holdfast/sdk';
import definition from '../src/index.js';
import { parseMariadbGtid } from '../src/internal/pitr/binlog-gtid.js';
import { openBinlogStream } from '../src/internal/pitr/binlog-stream.js';
import { adminSql, pitrConfig, pitrServer } from './pitr-helpers.js';

const id = randomBytes(4).toString('hex');
const database = `hf_pitr_gt_${id}`;
const spool = mkdtempSync(join(tmpdir(), 'hf-pitr-gtid-'));
/** The second replication domain the test writes in (a fixed one: each run would otherwise add a domain to the server's GTID state). */
const OTHER_DOMAIN = 44;

type Rows = Array<[number, number]>;
/** One committed write after the base: its GTID, what it did, and the table's rows right after it. */
interface Step {
  gtid: string;
  what: string;
  rows: Rows;
  hasExtraTable: boolean;
}

const steps: Step[] = [];
/** A transaction committed before the base: its GTID is in the base, not after it. */
let gtidBeforeBase: string;
let base: BaseBackupInfo;
let baseBytes: Buffer;
const archive = new Map<string, Buffer>();
const created: string[] = [];

function support(): PointInTimeSupport {
  return instantiateAdapter(container, definition, { ...pitrConfig('admin') }).pointInTime!()!;
}

function gtidInput(gtid: string, into: string, overrides: Partial<PointRestoreInput> = {}): PointRestoreInput {
  created.push(into);
  return {
    base,
    baseStream: Readable.from([baseBytes]),
    fetchSegment: async (name) => (archive.has(name) ? Readable.from([archive.get(name)!]) : null),
    target: { type: 'position', position: gtid, isGtid: true },
    database: { name: database, into },
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function rowsOf(name: string): Promise<Rows> {
  const rows = await adminSql<{ id: number; val: number }>(`SELECT id, val FROM \`${name}\`.items ORDER BY id`);
  return rows.map((row) => [row.id, row.val]);
}

async function hasTable(name: string, table: string): Promise<boolean> {
  const rows = await adminSql('SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [name, table]);
  return rows.length > 0;
}

async function databaseExists(name: string): Promise<boolean> {
  return (await adminSql('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length > 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  const { user, password } = pitrServer.users.admin;
  await adminSql(`CREATE DATABASE ${database}`);
  await adminSql(`CREATE TABLE ${database}.items (id INT PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB`);
  const writer = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database });
  // The same database written in another replication domain, from its own session.
  const otherDomain = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database });
  await otherDomain.query(`SET SESSION gtid_domain_id = ${OTHER_DOMAIN}`);
  const lastGtid = async (connection: mysql.Connection) => {
    const [[row]] = await connection.query<mysql.RowDataPacket[]>('SELECT @@last_gtid AS gtid');
    return String(row!.gtid);
  };
  let hasExtraTable = false;
  const step = async (connection: mysql.Connection, what: string, statements: string[]) => {
    for (const statement of statements) await connection.query(statement);
    steps.push({ gtid: await lastGtid(connection), what, rows: await rowsOf(database), hasExtraTable });
  };

  await writer.query('INSERT INTO items VALUES (1, 10)');
  gtidBeforeBase = await lastGtid(writer);

  const controller = new AbortController();
  const stream = openBinlogStream(pitrConfig('binlog'), { streamId: `test-gtid-${id}`, spoolDir: spool, flushIntervalMs: 500, signal: controller.signal });
  let covered = 0;
  const consumed = (async () => {
    for await (const segment of stream.segments) {
      archive.set(segment.name, readFileSync(segment.path));
      covered = Math.max(covered, segment.coversUntil.getTime());
      await stream.archived(segment);
    }
  })();
  consumed.catch(() => undefined);
  try {
    await new Promise<void>((resolve) => stream.onNotice((notice) => notice.type === 'started' && resolve()));
    const source = instantiateAdapter(container, definition, { ...pitrConfig('binlog') });
    const handle = await source.dump({ databases: [database], signal: new AbortController().signal });
    const chunks: Buffer[] = [];
    await pipeline(handle.stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
    base = ((await handle.done) as BaseBackupStats).base;
    baseBytes = Buffer.concat(chunks);

    await step(writer, 'insert 2', ['INSERT INTO items VALUES (2, 20)']);
    await step(writer, 'transaction: insert 3, update 2', ['BEGIN', 'INSERT INTO items VALUES (3, 30)', 'UPDATE items SET val = 21 WHERE id = 2', 'COMMIT']);
    await step(otherDomain, 'other domain: insert 4', ['INSERT INTO items VALUES (4, 40)']);
    await step(writer, 'update 3', ['UPDATE items SET val = 31 WHERE id = 3']);
    await adminSql('FLUSH BINARY LOGS');
    await step(writer, 'insert 5 after the rotation', ['INSERT INTO items VALUES (5, 50)']);
    hasExtraTable = true;
    await step(writer, 'DDL: create table extra', ['CREATE TABLE extra (id INT PRIMARY KEY)']);
    await step(otherDomain, 'other domain: update 4', ['UPDATE items SET val = 41 WHERE id = 4']);
    await step(writer, 'delete 1', ['DELETE FROM items WHERE id = 1']);
    await step(writer, 'insert 6', ['INSERT INTO items VALUES (6, 60)']);
    const lastWrite = Date.now();
    const deadline = Date.now() + 20_000;
    while (covered < lastWrite && Date.now() < deadline) await sleep(100);
    expect(covered).toBeGreaterThanOrEqual(lastWrite);
  } finally {
    await writer.end();
    await otherDomain.end();
    controller.abort();
    await stream.done.catch(() => undefined);
    await consumed;
  }
}, 60_000);

afterAll(async () => {
  for (const name of [database, ...created]) await adminSql(`DROP DATABASE IF EXISTS \`${name}\``);
  rmSync(spool, { recursive: true, force: true });
}, 30_000);

/** Restores to the GTID of step `index` and checks the copy holds exactly the rows right after that step. */
async function restoresStep(index: number, into: string): Promise<string[]> {
  const step = steps[index]!;
  const messages: string[] = [];
  const result = await support().restoreToPoint(gtidInput(step.gtid, into, { onProgress: (message) => messages.push(message) }));
  expect(await rowsOf(into)).toEqual(step.rows);
  expect(await hasTable(into, 'extra')).toBe(step.hasExtraTable);
  expect(result.warnings).toEqual([]);
  return messages;
}

describe('restore to a GTID (MariaDB)', () => {
  it('the writes got distinct GTIDs in two domains, and each changed the rows', () => {
    expect(steps.map((step) => step.gtid.split('-')[0])).toEqual(['0', '0', String(OTHER_DOMAIN), '0', '0', '0', String(OTHER_DOMAIN), '0', '0']);
    expect(new Set(steps.map((step) => step.gtid)).size).toBe(steps.length);
    for (let i = 1; i < steps.length; i++) {
      if (i !== 5) expect(steps[i]!.rows, steps[i]!.what).not.toEqual(steps[i - 1]!.rows); // step 5 is the DDL
    }
  });

  it('a transaction of several statements: all of it, nothing of the next transactions (another domain included)', async () => {
    const messages = await restoresStep(1, `hf_pitr_gt_a_${id}`);
    expect(messages.some((message) => message.startsWith(`the transaction of GTID ${steps[1]!.gtid} ends at ${base.startSegment}:`))).toBe(true);
  }, 60_000);

  it('a GTID of the other domain: every transaction logged before it in either domain, none after', async () => {
    await restoresStep(2, `hf_pitr_gt_b_${id}`);
  }, 60_000);

  it('a GTID after a rotation, in the second file: the first file whole, the second up to that transaction', async () => {
    const messages = await restoresStep(4, `hf_pitr_gt_c_${id}`);
    expect(messages.some((message) => /ends at \S+:\d+$/.test(message) && !message.includes(`${base.startSegment}:`))).toBe(true);
  }, 60_000);

  it('a DDL (a standalone GTID): its table is there, the next transactions are not', async () => {
    await restoresStep(5, `hf_pitr_gt_d_${id}`);
  }, 60_000);

  it('the last write: every transaction', async () => {
    await restoresStep(steps.length - 1, `hf_pitr_gt_e_${id}`);
    expect(steps.at(-1)!.rows).toEqual(await rowsOf(database));
  }, 60_000);

  it('refuses before writing anything: malformed, MySQL form, before the base, not in the archive, unknown domain', async () => {
    const [domain, serverId, sequence] = steps.at(-1)!.gtid.split('-');
    const cases: Array<[string, RegExp]> = [
      ['0-1', /is not one MariaDB GTID: write domain-server-sequence/],
      ['0-1-5,0-1-6', /one GTID, not a list/],
      ['3E11FA47-71CA-11E1-9E33-C80AA9429562:23', /MySQL's form .* not supported/],
      ['0-1-0', /out of range/],
      ['0-9999999999-1', /out of range/],
      [gtidBeforeBase, /before this base/],
      [`${domain}-${serverId}-${BigInt(sequence!) + 100_000n}`, /is not in the archived binary log from this base's start .*\(domain 0 goes up to sequence/],
      ['4000000000-1-1', /no transaction of domain 4000000000 is there/],
    ];
    for (const [gtid, message] of cases) {
      const into = `hf_pitr_gt_r_${id}`;
      const error = await support().restoreToPoint(gtidInput(gtid, into)).then(() => undefined, (caught: unknown) => caught);
      expect(isAdapterError(error) && error.code, gtid).toBe('CONFIG');
      expect((error as Error).message, gtid).toMatch(message);
      expect(await databaseExists(into), gtid).toBe(false);
    }
  }, 60_000);

  it('a GTID whose transaction is cut off at the end of the archive is refused, and no database is left', async () => {
    // The archive's copy of the file holding the last write cut just after its GTID event: its commit is missing.
    const last = steps.at(-1)!;
    const gtid = parseMariadbGtid(last.gtid);
    const into = `hf_pitr_gt_cut_${id}`;
    let file = '';
    let cut: number | undefined;
    for (const [name, bytes] of archive) {
      for (let at = 4; at + 32 <= bytes.length; at += bytes.readUInt32LE(at + 9)) {
        const isTarget = bytes[at + 4] === 162 && bytes.readBigUInt64LE(at + 19) === gtid.sequence && bytes.readUInt32LE(at + 27) === gtid.domain;
        if (isTarget) [file, cut] = [name, at + bytes.readUInt32LE(at + 9)];
      }
    }
    const bytes = archive.get(file)!;
    expect(cut).toBeDefined();
    const fetchSegment = async (name: string) => (name === file ? Readable.from([bytes.subarray(0, cut)]) : archive.has(name) ? Readable.from([archive.get(name)!]) : null);
    const error = await support().restoreToPoint(gtidInput(last.gtid, into, { fetchSegment })).then(() => undefined, (caught: unknown) => caught);
    expect((error as Error).message).toMatch(/is not whole in the archived binary log file/);
    expect(await databaseExists(into)).toBe(false);
  }, 60_000);
});
