// Issue 44, acceptance 1/3/4 at the adapter level: restore one database of a logical base to a point in time on the
// MariaDB PITR test server (127.0.0.1:3307). The binary log is streamed with openChangeLogStream and kept as the
// engine would (the latest version of each file by name); a writer stores NOW() of every statement in its row, so
// the state as of any second is known exactly and compared with what the restore built.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2/promise';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type BaseBackupInfo, type BaseBackupStats, type PointInTimeSupport, type PointRestoreInput, type RecoveryTarget } from '@holdfast/sdk';
import definition from '../src/index.js';
import { ReplayWatch, type ReplayProgress } from '../src/internal/pitr/binlog-replay-watch.js';
import { openBinlogStream } from '../src/internal/pitr/binlog-stream.js';
import { mysqlSourceConfig, type MysqlSourceConfig } from '../src/config.js';
import { adminSql, pitrConfig, pitrServer } from './pitr-helpers.js';

const id = randomBytes(4).toString('hex');
const database = `hf_pitr_pr_${id}`;
/** A second database in the same base: its rows must never reach a restore of `database`. */
const sibling = `hf_pitr_pr_sib_${id}`;
const spool = mkdtempSync(join(tmpdir(), 'hf-pitr-restore-'));

interface Change {
  id: number;
  val: number;
  /** The statement's NOW(), in Unix seconds (the binary log's time of its event). */
  at: number;
  kind: 'insert' | 'update';
}

/** Rows before the base (in the base), then every change after it in order. */
const beforeBase = new Map<number, number>();
const changes: Change[] = [];
/** Where the binary log stood right after a change, by the change's index. */
const positions = new Map<number, string>();
/** The row of the long transaction written last; when its first statement ran (second) and its commit had returned. */
const LONG_ID = 9000;
const LONG_VAL = 9;
let longTransaction: { firstAt: number; committedBy: number };
let base: BaseBackupInfo;
let baseBytes: Buffer;
let singleBase: { base: BaseBackupInfo; bytes: Buffer };
/** The archive: each file's latest version by name, as the engine keeps it. */
const archive = new Map<string, Buffer>();
const created: string[] = [];

function restoringSupport(config: MysqlSourceConfig = pitrConfig('admin')): PointInTimeSupport {
  return instantiateAdapter(container, definition, { ...config }).pointInTime!()!;
}

function restoreInput(target: RecoveryTarget, into: string | undefined, overrides: Partial<PointRestoreInput> = {}): PointRestoreInput {
  if (into) created.push(into);
  return {
    base,
    baseStream: Readable.from([baseBytes]),
    fetchSegment: async (name) => (archive.has(name) ? Readable.from([archive.get(name)!]) : null),
    target,
    ...(into ? { database: { name: database, into } } : {}),
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** The state as of the start of `second` (exclusive): the base's rows plus every change made in an earlier second. */
function expectedBefore(second: number): Array<[number, number]> {
  return expectedAfter(changes.filter((change) => change.at < second).length - 1);
}

/** The state with every change and the long transaction. */
function expectedLatest(): Array<[number, number]> {
  return [...expectedAfter(changes.length - 1), [LONG_ID, LONG_VAL] as [number, number]];
}

/** The state right after change `index` (-1: the base). */
function expectedAfter(index: number): Array<[number, number]> {
  const rows = new Map(beforeBase);
  for (const change of changes.slice(0, index + 1)) rows.set(change.id, change.val);
  return [...rows].sort((a, b) => a[0] - b[0]);
}

async function rowsOf(name: string): Promise<Array<[number, number]>> {
  const rows = await adminSql<{ id: number; val: number }>(`SELECT id, val FROM \`${name}\`.items ORDER BY id`);
  return rows.map((row) => [row.id, row.val]);
}

async function databasesLike(prefix: string): Promise<string[]> {
  const rows = await adminSql<Record<string, string>>(`SHOW DATABASES LIKE '${prefix}%'`);
  return rows.map((row) => Object.values(row)[0]!);
}

async function takeBase(databases: string[]): Promise<{ base: BaseBackupInfo; bytes: Buffer }> {
  const source = instantiateAdapter(container, definition, { ...pitrConfig('binlog') });
  const handle = await source.dump({ databases, signal: new AbortController().signal });
  const chunks: Buffer[] = [];
  await pipeline(handle.stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return { base: ((await handle.done) as BaseBackupStats).base, bytes: Buffer.concat(chunks) };
}

/** Tables the binary log maps for `name` from `position` (`file:offset`) to its end, read from the server. */
function loggedTables(position: string, name: string): string[] {
  const [file, offset] = position.split(':');
  const { user, password } = pitrServer.users.binlog;
  const decoded = execFileSync(
    'mariadb-binlog',
    // Strict GTID mode (the default): a replay logged with its old GTIDs would make this decode fail.
    ['--no-defaults', '--host', pitrServer.host, '--port', String(pitrServer.port), '--user', user, `--password=${password}`, '--skip-ssl', '--read-from-remote-server', '--to-last-log', `--start-position=${offset}`, file!],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  return decoded.split('\n').filter((line) => line.includes(`Table_map: \`${name}\`.`));
}

async function serverPosition(): Promise<string> {
  const [status] = await adminSql<{ File: string; Position: number }>('SHOW MASTER STATUS');
  return `${status!.File}:${status!.Position}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  const { user, password } = pitrServer.users.admin;
  for (const name of [database, sibling]) {
    await adminSql(`CREATE DATABASE ${name}`);
    await adminSql(`CREATE TABLE ${name}.items (id INT PRIMARY KEY, val INT NOT NULL, written_at DATETIME NOT NULL, updated_at DATETIME NULL) ENGINE=InnoDB`);
  }
  // A view: mariadb-dump writes views of a --databases script in a second section per database, at the end.
  await adminSql(`CREATE VIEW ${database}.big_items AS SELECT id, val FROM ${database}.items WHERE val >= 100`);
  for (const [key, val] of [[1, 10], [2, 20], [3, 30]] as const) {
    await adminSql(`INSERT INTO ${database}.items (id, val, written_at) VALUES (?, ?, NOW())`, [key, val]);
    beforeBase.set(key, val);
  }

  // The stream first (a new spool begins with the server's current file), then the base.
  const controller = new AbortController();
  const stream = openBinlogStream(pitrConfig('binlog'), { streamId: `test-restore-${id}`, spoolDir: spool, flushIntervalMs: 500, signal: controller.signal });
  let covered = 0;
  /** When the last change had committed: the archive must cover it. */
  let lastWrite = 0;
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
    // The base the tests restore from holds two databases (a --databases script); a second one holds only `database`.
    // Named rather than every database: other files create and drop databases on this server meanwhile.
    ({ base, bytes: baseBytes } = await takeBase([database, sibling]));
    singleBase = await takeBase([database]);

    // The writer: one session in the database (statement events carry it as their default database).
    const writer = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database });
    try {
      let next = 4;
      const insert = async () => {
        const key = next++;
        const val = key * 100;
        await writer.query('INSERT INTO items (id, val, written_at) VALUES (?, ?, NOW())', [key, val]);
        const [[row]] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(written_at) AS at FROM items WHERE id = ?', [key]);
        changes.push({ id: key, val, at: Number(row!.at), kind: 'insert' });
        // The sibling changes too, in its own session: rows a restore of `database` must not pick up.
        await adminSql('INSERT INTO items (id, val, written_at) VALUES (?, ?, NOW())', [key, -key], sibling);
      };
      const update = async (key: number) => {
        const val = Math.floor(Math.random() * 1_000_000);
        await writer.query('UPDATE items SET val = ?, updated_at = NOW() WHERE id = ?', [val, key]);
        const [[row]] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(updated_at) AS at FROM items WHERE id = ?', [key]);
        changes.push({ id: key, val, at: Number(row!.at), kind: 'update' });
        lastWrite = Date.now();
      };
      const mark = async () => {
        const [[status]] = await writer.query<mysql.RowDataPacket[]>('SHOW MASTER STATUS');
        positions.set(changes.length - 1, `${String(status!.File)}:${String(status!.Position)}`);
      };
      // Row events, a rotation, statement events, a rotation, row events: about 4.5 s across several seconds.
      for (let i = 0; i < 4; i++) {
        await insert();
        await update(1 + (i % 3));
        await sleep(280);
      }
      await adminSql('FLUSH BINARY LOGS');
      await writer.query("SET SESSION binlog_format = 'STATEMENT'");
      for (let i = 0; i < 4; i++) {
        await insert();
        await update(4 + i);
        await sleep(280);
      }
      await writer.query("SET SESSION binlog_format = 'ROW'");
      await adminSql('FLUSH BINARY LOGS');
      for (let i = 0; i < 4; i++) {
        await insert();
        await mark();
        await update(2);
        await mark();
        await sleep(280);
      }
      // Last, a transaction of two statements over more than a second: it counts at its commit (the GTID event
      // that opens it in the log carries the COMMIT statement's second), not at its first statement.
      await writer.query('BEGIN');
      await writer.query('INSERT INTO items (id, val, written_at) VALUES (?, ?, NOW())', [LONG_ID, LONG_VAL]);
      const [[first]] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(written_at) AS at FROM items WHERE id = ?', [LONG_ID]);
      await sleep(1500);
      await writer.query('COMMIT');
      longTransaction = { firstAt: Number(first!.at), committedBy: Date.now() };
      lastWrite = Date.now();
    } finally {
      await writer.end();
    }
    const deadline = Date.now() + 20_000;
    while (covered < lastWrite && Date.now() < deadline) await sleep(100);
    expect(covered).toBeGreaterThanOrEqual(lastWrite);
  } finally {
    controller.abort();
    await stream.done.catch(() => undefined);
    await consumed;
  }
}, 60_000);

afterAll(async () => {
  for (const name of [database, sibling, ...created]) await adminSql(`DROP DATABASE IF EXISTS \`${name}\``);
  rmSync(spool, { recursive: true, force: true });
}, 30_000);

describe('restore to a point in time (MariaDB)', () => {
  it('restores to a time between writes: every change of an earlier second, none of the target second on', async () => {
    // A second in the middle of the statement-based section, with changes after it.
    const statementSection = changes.slice(8, 16);
    const second = statementSection[3]!.at + 1;
    expect(changes.some((change) => change.at >= second)).toBe(true);
    const into = `hf_pitr_pr_t_${id}`;
    const messages: string[] = [];
    const target = new Date(second * 1000 + 400);
    const result = await restoringSupport().restoreToPoint(restoreInput({ type: 'time', time: target }, into, { onProgress: (message) => messages.push(message) }));

    expect(await rowsOf(into)).toEqual(expectedBefore(second));
    expect(expectedBefore(second)).not.toEqual(expectedAfter(changes.length - 1));
    const last = changes.filter((change) => change.at < second).at(-1)!;
    expect(result.recoveredTo!.getTime()).toBeGreaterThanOrEqual(last.at * 1000);
    expect(result.recoveredTo!.getTime()).toBeLessThan(second * 1000);
    expect(result.warnings).toEqual([]);
    expect(messages.some((message) => message.startsWith(`loading "${database}"`))).toBe(true);
    // The sibling's rows never came along; the original is untouched.
    expect((await adminSql(`SHOW TABLES FROM \`${into}\``)).length).toBe(2); // items and the view
    expect(await rowsOf(database)).toEqual(expectedLatest());
  }, 60_000);

  it('counts a transaction at its commit: a target after its first statement but before its commit leaves it out', async () => {
    const before = `hf_pitr_pr_c1_${id}`;
    // The commit began at least 1.5 s after the first statement: in a later second than firstAt.
    await restoringSupport().restoreToPoint(restoreInput({ type: 'time', time: new Date((longTransaction.firstAt + 1) * 1000) }, before));
    expect(await rowsOf(before)).toEqual(expectedBefore(longTransaction.firstAt + 1));
    expect((await rowsOf(before)).some(([key]) => key === LONG_ID)).toBe(false);
    const after = `hf_pitr_pr_c2_${id}`;
    await restoringSupport().restoreToPoint(restoreInput({ type: 'time', time: new Date(Math.floor(longTransaction.committedBy / 1000 + 1) * 1000) }, after));
    expect(await rowsOf(after)).toEqual(expectedLatest());
  }, 60_000);

  it('restores to the latest archived change, statement-based ones included', async () => {
    const into = `hf_pitr_pr_l_${id}`;
    const before = await serverPosition();
    const result = await restoringSupport().restoreToPoint(restoreInput({ type: 'latest' }, into));
    // The administrator may leave the binary log: neither the base load nor the replay was logged.
    expect(result.warnings).toEqual([]);
    expect(loggedTables(before, into)).toEqual([]);
    expect(await rowsOf(into)).toEqual(expectedLatest());
    // NOW() of the statement-based inserts replays as written (SET TIMESTAMP precedes each statement).
    const times = await adminSql<{ id: number; at: number }>(`SELECT id, UNIX_TIMESTAMP(written_at) AS at FROM \`${into}\`.items WHERE id >= 4 AND id < ${LONG_ID} ORDER BY id`);
    expect(times.map((row) => [row.id, Number(row.at)])).toEqual(changes.filter((change) => change.kind === 'insert').map((change) => [change.id, change.at]));
    expect(result.recoveredTo!.getTime()).toBeGreaterThan(longTransaction.firstAt * 1000);
    const viewed = await adminSql<{ id: number; val: number }>(`SELECT id, val FROM \`${into}\`.big_items ORDER BY id`);
    expect(viewed.map((row) => [row.id, row.val])).toEqual(expectedLatest().filter(([, val]) => val >= 100));
  }, 60_000);

  it('restores to a binary log position: the changes before it, none after', async () => {
    // After the third insert of the last section: its update follows at a later position.
    const index = [...positions.keys()][4]!;
    const position = positions.get(index)!;
    expect(position.split(':')[0]).not.toBe(base.startSegment);
    const into = `hf_pitr_pr_p_${id}`;
    await restoringSupport().restoreToPoint(restoreInput({ type: 'position', position }, into));
    expect(await rowsOf(into)).toEqual(expectedAfter(index));
    expect(expectedAfter(index)).not.toEqual(expectedAfter(index + 1));
  }, 60_000);

  it('restores from a base of that one database alone (a script without CREATE DATABASE) to a time', async () => {
    const second = changes[12]!.at;
    const into = `hf_pitr_pr_s_${id}`;
    await restoringSupport().restoreToPoint({ ...restoreInput({ type: 'time', time: new Date(second * 1000) }, into), base: singleBase.base, baseStream: Readable.from([singleBase.bytes]) });
    expect(await rowsOf(into)).toEqual(expectedBefore(second));
  }, 60_000);

  it('replays into the binary log, with a warning, for an account that may not leave it', async () => {
    // An account that may replay (BINLOG REPLAY) and write its database, but not turn off sql_log_bin.
    const into = `hf_pitr_pr_w_${id}`;
    const account = `hf_pr_${id}`;
    const password = randomBytes(12).toString('hex');
    await adminSql(`CREATE USER '${account}'@'%' IDENTIFIED BY '${password}'`);
    try {
      await adminSql(`GRANT ALL ON \`${into}\`.* TO '${account}'@'%'`);
      // SET USER: the base recreates the view with its DEFINER (the administrator), as any restore of it does.
      await adminSql(`GRANT BINLOG REPLAY, SET USER ON *.* TO '${account}'@'%'`);
      const config = mysqlSourceConfig.parse({ ...pitrConfig('admin'), user: account, password });
      const before = await serverPosition();
      const result = await restoringSupport(config).restoreToPoint(restoreInput({ type: 'latest' }, into));
      expect(await rowsOf(into)).toEqual(expectedLatest());
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]).toContain(`account ${account} may not turn off binary logging`);
      // Logged with new GTIDs in order (the original ones left out): the log still decodes in strict GTID mode.
      expect(loggedTables(before, into).length).toBeGreaterThan(0);
    } finally {
      await adminSql(`DROP USER IF EXISTS '${account}'@'%'`);
    }
  }, 60_000);

  it('refuses, before writing anything, a missing database, an existing target, a named target, a bad position, a database not in the base', async () => {
    const into = `hf_pitr_pr_r_${id}`;
    const cases: Array<[PointRestoreInput, string]> = [
      [restoreInput({ type: 'latest' }, undefined), 'needs database { name, into }'],
      [restoreInput({ type: 'latest' }, sibling), `database "${sibling}" already exists`],
      [restoreInput({ type: 'name', name: 'before-upgrade' }, into), 'named restore points are PostgreSQL only'],
      [restoreInput({ type: 'position', position: 'mysql-bin:12' }, into), 'is not <binary log file>:<offset>'],
      [{ ...restoreInput({ type: 'latest' }, into), database: { name: 'hf_not_in_base', into } }, 'holds no database "hf_not_in_base"'],
      [{ ...restoreInput({ type: 'latest' }, into), database: { name: database, into: 'bad name;' } }, 'is not a database name'],
      [restoreInput({ type: 'position', position: `${base.startSegment}:4` }, into), 'is not in this base\'s binary log after its start'],
      [restoreInput({ type: 'time', time: new Date(base.consistentAt.getTime() - 60_000) }, into), 'is before this base backup was taken'],
    ];
    for (const [input, message] of cases) {
      const error = await restoringSupport().restoreToPoint(input).catch((caught: unknown) => caught);
      expect(isAdapterError(error) && error.code, message).toBe('CONFIG');
      expect((error as Error).message).toContain(message);
    }
    // The streaming account alone may not replay (BINLOG REPLAY): refused before the base is loaded.
    const error = await restoringSupport(pitrConfig('binlog')).restoreToPoint(restoreInput({ type: 'latest' }, into)).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('may not replay a binary log');
    expect(await databasesLike(`hf_pitr_pr_r_${id}`)).toEqual([]);
    expect(await rowsOf(sibling)).toHaveLength(12);
  }, 60_000);

  it('an abort while the base loads (its stream waiting for more bytes) drops the new database and leaves no child process', async () => {
    const into = `hf_pitr_pr_b_${id}`;
    const controller = new AbortController();
    // The engine's stream of the base, stalled half way (a slow destination).
    const stalled = new PassThrough();
    stalled.write(baseBytes.subarray(0, Math.floor(baseBytes.length / 2)));
    const restoring = restoringSupport()
      .restoreToPoint(restoreInput({ type: 'latest' }, into, { signal: controller.signal, baseStream: stalled }))
      .catch((caught: unknown) => caught);
    const deadline = Date.now() + 10_000;
    while ((await databasesLike(into)).length === 0 && Date.now() < deadline) await sleep(50);
    expect(await databasesLike(into)).toEqual([into]);
    const abortedAt = Date.now();
    controller.abort();
    const error = await restoring;
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    expect(Date.now() - abortedAt).toBeLessThan(5000);
    expect(stalled.destroyed).toBe(true);
    expect(await databasesLike(into)).toEqual([]);
    const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(processes.split('\n').filter((line) => line.includes(into))).toEqual([]);
  }, 60_000);

  it('an abort mid-replay drops the new database and leaves no child process', async () => {
    const into = `hf_pitr_pr_a_${id}`;
    const controller = new AbortController();
    let fetches = 0;
    const input = restoreInput({ type: 'latest' }, into, {
      signal: controller.signal,
      fetchSegment: async (name) => {
        // The second file: the first one has been replayed into the new database by now.
        if (++fetches === 2) {
          expect(await databasesLike(into)).toEqual([into]);
          controller.abort();
        }
        return archive.has(name) ? Readable.from([archive.get(name)!]) : null;
      },
    });
    const error = await restoringSupport().restoreToPoint(input).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    expect(fetches).toBe(2);
    expect(await databasesLike(into)).toEqual([]);
    const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(processes.split('\n').filter((line) => line.includes(into))).toEqual([]);
  }, 60_000);
});

describe('a statement-based event naming the original database', () => {
  it('stops the restore before the statement runs: the original is untouched, the new database dropped', async () => {
    const original = `hf_pitr_pr_g_${id}`;
    const into = `hf_pitr_pr_gi_${id}`;
    created.push(original, into);
    await adminSql(`CREATE DATABASE ${original}`);
    await adminSql(`CREATE TABLE ${original}.items (id INT PRIMARY KEY, val INT NOT NULL, written_at DATETIME NOT NULL, updated_at DATETIME NULL)`);
    const guardSpool = mkdtempSync(join(tmpdir(), 'hf-pitr-guard-'));
    const controller = new AbortController();
    const stream = openBinlogStream(pitrConfig('binlog'), { streamId: `test-guard-${id}`, spoolDir: guardSpool, flushIntervalMs: 500, signal: controller.signal });
    const pieces = new Map<string, Buffer>();
    let covered = 0;
    const consumed = (async () => {
      for await (const segment of stream.segments) {
        pieces.set(segment.name, readFileSync(segment.path));
        covered = Math.max(covered, segment.coversUntil.getTime());
        await stream.archived(segment);
      }
    })();
    consumed.catch(() => undefined);
    try {
      await new Promise<void>((resolve) => stream.onNotice((notice) => notice.type === 'started' && resolve()));
      const guardBase = await takeBase([original]);
      const { user, password } = pitrServer.users.admin;
      const writer = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database: original });
      try {
        await writer.query("SET SESSION binlog_format = 'STATEMENT'");
        await writer.query('INSERT INTO items (id, val, written_at) VALUES (1, 1, NOW())');
        // Qualified: --rewrite-db would leave `original` in the text, so a replay would run it on the original.
        await writer.query(`UPDATE ${original}.items SET val = val + 1 WHERE id = 1`);
      } finally {
        await writer.end();
      }
      const written = Date.now();
      const deadline = Date.now() + 20_000;
      while (covered < written && Date.now() < deadline) await sleep(100);
      const input: PointRestoreInput = {
        base: guardBase.base,
        baseStream: Readable.from([guardBase.bytes]),
        fetchSegment: async (name) => (pieces.has(name) ? Readable.from([pieces.get(name)!]) : null),
        target: { type: 'latest' },
        database: { name: original, into },
        signal: new AbortController().signal,
      };
      const error = await restoringSupport().restoreToPoint(input).catch((caught: unknown) => caught);
      expect(isAdapterError(error) && error.code).toBe('CONFIG');
      expect((error as Error).message).toContain(`names another database itself (${original}.`);
      expect(await databasesLike(into)).toEqual([]);
      expect(await rowsOf(original)).toEqual([[1, 2]]);
    } finally {
      controller.abort();
      await stream.done.catch(() => undefined);
      await consumed;
      rmSync(guardSpool, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the replay watch', () => {
  async function watched(lines: string[], guarded = ['shop', 'mysql'], isGtidKept = true): Promise<{ text: string; error?: Error; transactions: number; lastCommitted?: Date }> {
    const progress: ReplayProgress = { transactions: 0 };
    const watch = new ReplayWatch(guarded, progress, isGtidKept);
    const out: Buffer[] = [];
    try {
      await pipeline(Readable.from([Buffer.from(lines.join('\n') + '\n')]), watch, new Writable({ write: (chunk: Buffer, _e, cb) => (out.push(chunk), cb()) }));
      return { text: Buffer.concat(out).toString(), transactions: progress.transactions, lastCommitted: progress.lastCommitted };
    } catch (error) {
      return { text: Buffer.concat(out).toString(), error: error as Error, transactions: progress.transactions };
    }
  }

  it('stops a statement naming another database before the client gets it', async () => {
    for (const statement of ['UPDATE shop.items SET val = 1', 'INSERT INTO `shop`.`items` VALUES (1)', 'DROP DATABASE shop', 'drop schema if exists `shop`', 'DELETE FROM mysql.user']) {
      const result = await watched(['#261206 22:00:01 server id 1  end_log_pos 100 CRC32 0x01 \tQuery\tthread_id=5', 'use `shop_restored`/*!*/;', statement, '/*!*/;']);
      expect(result.error?.message, statement).toContain('names another database itself');
      expect(result.text).not.toContain(statement);
    }
    const harmless = await watched(["UPDATE items SET note = 'shopping' WHERE items.id = 1", 'DROP DATABASE shop_other', 'UPDATE shop_restored.items SET val = 2']);
    expect(harmless.error).toBeUndefined();
    // Restoring into the original name (it was dropped): statements may name it.
    expect((await watched(['UPDATE shop.items SET val = 1'], ['mysql'])).error).toBeUndefined();
  });

  it('counts a transaction only when it held an event of the restored database', async () => {
    const header = (time: string, kind: string) => `#261206 ${time} server id 1  end_log_pos 100 CRC32 0x01 \t${kind}`;
    const result = await watched([
      header('22:00:01', 'GTID 0-1-7 trans'),
      '/*M!100001 SET @@session.gtid_seq_no=7*//*!*/;',
      'START TRANSACTION',
      '/*!*/;',
      header('22:00:01', 'Table_map: `shop_restored`.`t` mapped to number 24'),
      header('22:00:01', 'Write_rows: table id 24 flags: STMT_END_F'),
      "BINLOG '",
      'AAAA',
      "'/*!*/;",
      header('22:00:01', 'Xid = 487'),
      'COMMIT/*!*/;',
      header('22:00:02', 'GTID 0-1-8 ddl'),
      header('22:00:02', 'Query\tthread_id=5'),
      'SET TIMESTAMP=1796594262/*!*/;',
      'CREATE TABLE u (id INT)',
      '/*!*/;',
      // Another database's transaction: --database left its rows out, its GTID and commit remain.
      header('22:00:05', 'GTID 0-1-9 trans'),
      'START TRANSACTION',
      '/*!*/;',
      header('22:00:05', 'Xid = 490'),
      'COMMIT/*!*/;',
      // Cut by the stop: begun, never committed (mariadb-binlog ends with ROLLBACK).
      header('22:00:06', 'GTID 0-1-10 trans'),
      'START TRANSACTION',
      '/*!*/;',
      header('22:00:06', 'Table_map: `shop_restored`.`t` mapped to number 24'),
      'ROLLBACK /* added by mysqlbinlog */;',
    ]);
    expect(result.error).toBeUndefined();
    expect(result.transactions).toBe(2);
    expect(result.lastCommitted).toEqual(new Date('2026-12-06T22:00:02Z'));
  });

  it('leaves the original GTID settings out of a replay the server logs', async () => {
    const lines = ['/*M!100001 SET @@session.gtid_domain_id=0*//*!*/;', '/*M!100001 SET @@session.server_id=1*//*!*/;', '/*M!100001 SET @@session.gtid_seq_no=352*//*!*/;', 'START TRANSACTION', '/*!*/;'];
    expect((await watched(lines, [], true)).text).toBe(`${lines.join('\n')}\n`);
    expect((await watched(lines, [], false)).text).toBe('START TRANSACTION\n/*!*/;\n');
  });

  it('leaves out account statements logged with the database as default, delimiter included', async () => {
    const query = '#261206 22:00:01 server id 1  end_log_pos 100 CRC32 0x01 \tQuery\tthread_id=5';
    const lines = [query, 'SET TIMESTAMP=1796594262/*!*/;', "GRANT SELECT ON shop.* TO 'bob'@'%'", '/*!*/;', query, "DROP USER 'bob'@'%'", '/*!*/;', query, "SET PASSWORD FOR 'bob'@'%' = PASSWORD('x')", '/*!*/;', query, 'CREATE TABLE t (id INT)', '/*!*/;'];
    const progress: ReplayProgress = { transactions: 0 };
    const out: Buffer[] = [];
    await pipeline(Readable.from([Buffer.from(`${lines.join('\n')}\n`)]), new ReplayWatch(['shop'], progress), new Writable({ write: (chunk: Buffer, _e, cb) => (out.push(chunk), cb()) }));
    expect(Buffer.concat(out).toString()).toBe(`${[query, 'SET TIMESTAMP=1796594262/*!*/;', query, query, query, 'CREATE TABLE t (id INT)', '/*!*/;'].join('\n')}\n`);
    expect(progress.accountStatements).toBe(3);
  });
});
