// Issue 44, scope 4: the recovery kit restores one database of a MySQL/MariaDB base backup and its archived binary log
// to a point in time without Holdfast, as the PostgreSQL kit does (issue 43, scope 7). Real everything up to the
// destination: the MariaDB PITR test server (127.0.0.1:3307, binary logging, ROW), the MySQL source in point-in-time
// mode through the engine, a LOCAL destination, a job encrypted with a key profile and compressed with ZSTD (Node 20
// has no zstd: the kit uses the zstd program), the binary log flushed every second. Then, as a user without Holdfast
// would: the destination's files are copied to a scratch folder, the kit is written out, and its script runs as a
// plain `node` child process with the mariadb client programs, building new databases on the same server. A binary
// log event carries the second its statement started (the NOW() each row stores), and a time target T replays every
// transaction that started before T's whole second and none from it on: each restored database must hold exactly
// the writer's state of before that second.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sourceMysql from '@holdfast/source-mysql';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecoveryKit } from '../../src/codec/recovery-kit.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from '../pitr/pitr-server.js';

const run = promisify(execFile);
const SERVICES = '/tmp/holdfast-test-services';
const WRITE_FOR_MS = 10_000;
const WRITE_EVERY_MS = 100;

const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };
const SUFFIX = randomBytes(4).toString('hex');
const JOB = `kitmysql${SUFFIX}`;
/** The test's database; every database it creates (the restores) starts with this name, and is dropped at the end. */
const DB = `hf_kit_mysql_${SUFFIX}`;
/** A second database of the job, so the base is a multi-database script the kit must cut to DB's sections. */
const OTHER = `${DB}_other`;

/** One row as the writer left it: `at` is the NOW() of the statement that wrote it (UTC, whole seconds). */
interface Row {
  id: number;
  v: number;
  at: string;
}

/** One autocommitted insert or update of the writer, with the second its statement started (its binary log time). */
interface Write extends Row {
  second: number;
}

interface KitRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An administrator connection (UTC session, DATETIME as text so values compare exactly). */
const connect = (database?: string) =>
  mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password, database, timezone: 'Z', dateStrings: true });

/** `instant` written with a +02:00 offset, as a user east of UTC would type it. */
function withOffset(instant: number): string {
  return new Date(instant + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
}

describe('the recovery kit restores a MySQL/MariaDB base backup and its binary log to a point in time without Holdfast (issue 44, scope 4)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let apiKey: string;
  let admin: mysql.Connection;
  let work: string;
  let destination: string;
  let scratch: string;
  let kitDir: string;
  /** The kit's --work-dir: it must be empty after every run. */
  let kitWork: string;
  let isServerClosed = false;
  const jobKey = randomBytes(32);

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, v INT NOT NULL, at DATETIME NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE DATABASE \`${OTHER}\``);
    await admin.query(`CREATE TABLE \`${OTHER}\`.notes (id INT PRIMARY KEY) ENGINE=InnoDB`);
    await admin.query(`INSERT INTO \`${OTHER}\`.notes VALUES (1)`);
    work = await mkdtemp(join(tmpdir(), 'hf-kit-mysql-pitr-'));
    destination = join(work, 'destination');
    scratch = join(work, 'downloaded');
    kitDir = join(work, 'kit');
    kitWork = join(work, 'kit-work');
    for (const dir of [destination, kitDir, kitWork]) await mkdir(dir);
    await writeFile(join(work, 'password.txt'), `${mariadb.users.admin.password}\n`, { mode: 0o600 });
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    const { user, password } = mariadb.users.admin;
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    apiKey = await server.apiKey('kit-mysql-pitr', ['history:read', 'jobs:execute']);
  }, 120_000);

  afterAll(async () => {
    if (!isServerClosed) await server?.close();
    if (admin) {
      // The test's database and every restore of it, whatever happened (exact prefix: `_` is a LIKE wildcard).
      for (const name of await databasesLike(DB)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      await admin.end().catch(() => undefined);
    }
    if (work) await rm(work, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('restores an instant between commits, a binary log position and the latest state into new databases, and refuses an existing database, a target before the base, a wrong key and a missing file, leaving nothing behind', async () => {
    server.catalog.addJob({ id: JOB, name: `kit mysql pitr ${SUFFIX}`, compression: 'ZSTD', databases: [DB, OTHER] }, 'mariadb', [{ configId: 'disk' }], { profileId: 'profile', key: jobKey });
    // The stream starts with the server's current file, which must hold the base's coordinates: the base is taken
    // once the stream has archived something (a write of the test's own makes sure there is something).
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    const seeded = await seed();
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key: apiKey });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, apiKey, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');

    const { writes, mark } = await writeRows(seeded);
    const writerEnded = Date.now();
    // A partial's window end is a reading of the server's position taken just before its copy: once it passes the
    // writer's end, every write is in the archive.
    await until(
      'a window that ends after the last write',
      async () => {
        const window = (await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key: apiKey })).body?.data?.window;
        return window && Date.parse(window.end) >= writerEnded;
      },
      60_000,
    );

    // What a user downloads from the destination: the base backup with its sidecar, and pitr/<job id>/wal/. The
    // server stops first, so no piece is being rewritten while the folder is copied.
    await server.close();
    isServerClosed = true;
    await cp(destination, scratch, { recursive: true });
    const baseFile = await findBase(scratch);
    const sidecar = JSON.parse(await readFile(`${baseFile}.meta.json`, 'utf8')) as { pointInTime: { startSegment: string; startPosition: string; consistentAt: string; logKind: string } };
    expect(sidecar.pointInTime.logKind).toBe('mysql-binlog');
    const binlogs = join(scratch, 'pitr', JOB, 'wal');
    const objects = await readdir(join(binlogs, '00000001'));
    expect(objects.every((name) => /^mysql-bin\.\d{6}(\.partial)?\.zst\.enc$/.test(name)), objects.join(', ')).toBe(true);
    expect(objects.some((name) => name.startsWith(`${sidecar.pointInTime.startSegment}.`))).toBe(true);

    for (const file of await buildRecoveryKit({ key: jobKey })) await writeFile(join(kitDir, file.name), file.content, { mode: file.mode });
    const keyArgs = ['--key-file', join(kitDir, 'holdfast-key.txt')];
    const connection = ['--host', mariadb.host, '--port', String(mariadb.port), '--user', mariadb.users.admin.user, '--password-file', join(work, 'password.txt'), '--work-dir', kitWork];
    const common = [...keyArgs, '--base', baseFile, '--binlogs', binlogs, '--database', DB, ...connection];

    // A whole second in the middle of the writes, with an instant 400 ms into it (between two commits of the
    // writer): the copy holds exactly the writes whose statements started before that second.
    const seconds = [...new Set(writes.map((write) => write.second))].filter((second) => second > writes[0]!.second && second <= writes[writes.length - 1]!.second);
    expect(seconds.length).toBeGreaterThanOrEqual(3);
    const second = seconds[Math.floor(seconds.length / 2)]!;
    const instant = second * 1000 + 400;
    const expected = stateBefore(seeded, writes, second);
    const restored = await kit(['mysql-pitr', ...common, '--into', `${DB}_instant`, '--target-time', withOffset(instant)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(await rowsOf(`${DB}_instant`)).toEqual(expected);
    expect(expected).not.toEqual(stateBefore(seeded, writes, Infinity));
    const lastBefore = Math.max(...writes.filter((write) => write.second < second).map((write) => write.second));
    expect(restored.stdout).toContain(`Restored "${DB}" of the base backup into the new database "${DB}_instant"`);
    expect(restored.stdout).toContain(`The last one replayed began at ${new Date(lastBefore * 1000).toISOString()}`);
    expect(await readdir(kitWork)).toEqual([]);
    // The base holds both databases: only DB's sections were loaded.
    const [tables] = await admin.query<mysql.RowDataPacket[]>(`SHOW TABLES FROM \`${DB}_instant\``);
    expect(tables.map((row) => String(Object.values(row)[0]))).toEqual(['items']);

    // --latest: every write.
    const latest = await kit(['mysql-pitr', ...common, '--into', `${DB}_latest`, '--latest']);
    expect(latest.code, latest.stderr).toBe(0);
    expect(await rowsOf(`${DB}_latest`)).toEqual(stateBefore(seeded, writes, Infinity));
    expect(await rowsOf(`${DB}_latest`)).toEqual(await rowsOf(DB));

    // A binary log position read just after one write: every write up to it, none after.
    const atPosition = await kit(['mysql-pitr', ...common, '--into', `${DB}_position`, '--target-position', mark.position]);
    expect(atPosition.code, atPosition.stderr).toBe(0);
    expect(await rowsOf(`${DB}_position`)).toEqual(stateBefore(seeded, writes.slice(0, mark.after), Infinity));

    // The GTID of that same write: the same rows, found by searching the decrypted files for its transaction's end.
    const atGtid = await kit(['mysql-pitr', ...common, '--into', `${DB}_gtid`, '--target-gtid', mark.gtid]);
    expect(atGtid.code, atGtid.stderr).toBe(0);
    expect(atGtid.stderr).toContain(`the transaction of GTID ${mark.gtid} ends at `);
    expect(await rowsOf(`${DB}_gtid`)).toEqual(stateBefore(seeded, writes.slice(0, mark.after), Infinity));

    // --print-only: no connection, the commands printed, the prepared folder left for the operator.
    const printed = await kit(['mysql-pitr', ...keyArgs, '--base', baseFile, '--binlogs', binlogs, '--database', DB, '--into', `${DB}_printed`, '--latest', '--print-only', '--work-dir', kitWork]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(`TZ=UTC mariadb-binlog --no-defaults '--rewrite-db=${DB}->${DB}_printed'`);
    expect(printed.stdout).toMatch(new RegExp(`--database=${DB} --disable-log-bin --skip-gtid-strict-mode --start-position=\\d+ `));
    expect(await databasesLike(`${DB}_printed`)).toEqual([]);
    const [prepared] = await readdir(kitWork);
    expect(await readdir(join(kitWork, prepared!))).toContain('base.sql');
    await rm(join(kitWork, prepared!), { recursive: true });

    // Refusals: each with its exit code and message, no database created and nothing left in the work folder.
    const before = await rowsOf(DB);
    await writeFile(join(work, 'other-key.txt'), `${randomBytes(32).toString('hex')}\n`);
    const withoutStart = join(work, 'binlogs-without-start');
    await cp(binlogs, withoutStart, { recursive: true });
    for (const name of objects.filter((object) => object.startsWith(`${sidecar.pointInTime.startSegment}.`))) await rm(join(withoutStart, '00000001', name));
    const refusals: Array<[string, string[], string | undefined, number, RegExp]> = [
      ['the database exists', [...common, '--latest'], undefined, 6, new RegExp(`database "${DB}" already exists`)],
      ['before the base', [...common, '--target-time', withOffset(Date.parse(sidecar.pointInTime.consistentAt) - 60_000)], `${DB}_early`, 8, /is before this base backup was taken/],
      ['after the newest event', [...common, '--target-time', withOffset(writerEnded + 3_600_000)], `${DB}_after`, 8, /is after the newest event in the archived binary log/],
      ['a GTID not archived', [...common, '--target-gtid', mark.gtid.replace(/-(\d+)$/, (_all, sequence: string) => `-${BigInt(sequence) + 1_000_000n}`)], `${DB}_nogtid`, 8, /is not in the binary log from this base backup's start/],
      ['a wrong key', ['--key-file', join(work, 'other-key.txt'), ...common.slice(2), '--latest'], `${DB}_wrongkey`, 3, /wrong key/],
      ['a missing file', [...keyArgs, '--base', baseFile, '--binlogs', withoutStart, '--database', DB, ...connection, '--latest'], `${DB}_missing`, 9, new RegExp(`binary log file ${sidecar.pointInTime.startSegment.replace('.', '\\.')}, where the base backup starts, is not in the --binlogs folder`)],
    ];
    for (const [what, args, into, code, message] of refusals) {
      const refused = await kit(['mysql-pitr', ...args, ...(into ? ['--into', into] : [])]);
      expect(refused.code, `${what}: ${refused.stderr}`).toBe(code);
      expect(refused.stderr, what).toMatch(message);
      expect(refused.stderr, what).toContain('(nothing was restored)');
      if (into) expect(await databasesLike(into), what).toEqual([]);
      expect(await readdir(kitWork), what).toEqual([]);
    }
    expect(await rowsOf(DB)).toEqual(before);

    // Ctrl-C while the files are decrypted: exit 130, no database, the work folder (decrypted data) removed.
    const stopped = await kit(['mysql-pitr', ...common, '--into', `${DB}_interrupted`, '--latest'], 'decrypting the base backup');
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain('interrupted by SIGINT (nothing was restored)');
    expect(await databasesLike(`${DB}_interrupted`)).toEqual([]);
    expect(await readdir(kitWork)).toEqual([]);

    // A failure after the database was created (a statement in DB's section of the base fails on load): the kit drops
    // what it built.
    const broken = join(work, 'broken-base.sql');
    // Node 20 has no zstd: the kit decrypts only, the zstd program decompresses.
    const plain = await kit([...keyArgs, '--decompress', 'none', '--out', `${broken}.zst`, baseFile]);
    expect(plain.code, plain.stderr).toBe(0);
    await run('zstd', ['-d', '-q', '-o', broken, `${broken}.zst`]);
    const script = await readFile(broken, 'utf8');
    const use = `USE \`${DB}\`;\n`;
    expect(script).toContain(use);
    const at = script.indexOf(use) + use.length;
    await writeFile(broken, `${script.slice(0, at)}SELECT * FROM no_such_table_${SUFFIX};\n${script.slice(at)}`);
    const meta = JSON.parse(await readFile(`${baseFile}.meta.json`, 'utf8')) as Record<string, unknown>;
    await writeFile(`${broken}.meta.json`, JSON.stringify({ ...meta, compression: 'NONE' }));
    const failed = await kit(['mysql-pitr', ...keyArgs, '--base', broken, '--binlogs', binlogs, '--database', DB, ...connection, '--into', `${DB}_broken`, '--latest']);
    expect(failed.code, failed.stderr).toBe(10);
    expect(failed.stderr).toContain(`loading the base backup into "${DB}_broken" failed`);
    expect(failed.stderr).toContain(`dropped the half-built database "${DB}_broken"`);
    expect(await databasesLike(`${DB}_broken`)).toEqual([]);
    expect(await readdir(kitWork)).toEqual([]);
  }, 180_000);

  /**
   * The kit's script as a plain child process: only PATH in its environment, no Holdfast code. With `interruptAt`,
   * SIGINT is sent once its standard error shows that text.
   */
  function kit(args: string[], interruptAt?: string): Promise<KitRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(kitDir, 'holdfast-decrypt.mjs'), ...args], { cwd: work, env: { PATH: process.env.PATH }, signal: AbortSignal.timeout(120_000) });
      let stdout = '';
      let stderr = '';
      let isInterrupted = false;
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        // Once: a second SIGINT ends the script at once, as a second Ctrl-C should.
        if (interruptAt && stderr.includes(interruptAt) && !isInterrupted) isInterrupted = child.kill('SIGINT');
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Rows written before the base backup (in the base, not the log), and a change the stream archives. */
  async function seed(): Promise<Row[]> {
    const writer = await connect(DB);
    try {
      for (let id = 1; id <= 5; id++) await writer.query('INSERT INTO items VALUES (?, 0, NOW())', [id]);
      const [rows] = await writer.query<mysql.RowDataPacket[]>('SELECT id, v, at FROM items ORDER BY id');
      return rows.map((row) => ({ id: Number(row.id), v: Number(row.v), at: String(row.at) }));
    } finally {
      await writer.end();
    }
  }

  /**
   * One autocommitted statement about every {@link WRITE_EVERY_MS} for {@link WRITE_FOR_MS}: a new row, or an update
   * of an earlier one, each storing NOW(), read back after each statement (its `at` is the second its binary log
   * events carry).
   */
  async function writeRows(seeded: Row[]): Promise<{ writes: Write[]; mark: { after: number; position: string; gtid: string } }> {
    const writer = await connect(DB);
    const writes: Write[] = [];
    let mark: { after: number; position: string; gtid: string } | undefined;
    let nextId = seeded.length + 1;
    try {
      const end = Date.now() + WRITE_FOR_MS;
      for (let count = 0; Date.now() < end; count++) {
        const isInsert = count % 3 !== 2;
        const id = isInsert ? nextId++ : 1 + (count % (nextId - 1));
        if (isInsert) await writer.query('INSERT INTO items VALUES (?, 1, NOW())', [id]);
        else await writer.query('UPDATE items SET v = v + 1, at = NOW() WHERE id = ?', [id]);
        const [rows] = await writer.query<mysql.RowDataPacket[]>('SELECT v, at, UNIX_TIMESTAMP(at) AS second FROM items WHERE id = ?', [id]);
        writes.push({ id, v: Number(rows[0]!.v), at: String(rows[0]!.at), second: Number(rows[0]!.second) });
        if (count === 30) {
          // The server's position just after this write committed: a position target there keeps writes 0-30 only.
          const [status] = await writer.query<mysql.RowDataPacket[]>('SHOW MASTER STATUS');
          // And its GTID: a GTID target there keeps the same writes (that transaction included, none after).
          const [[gtid]] = await writer.query<mysql.RowDataPacket[]>('SELECT @@last_gtid AS gtid');
          mark = { after: writes.length, position: `${String(status[0]!.File)}:${String(status[0]!.Position)}`, gtid: String(gtid!.gtid) };
        }
        await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    if (!mark) throw new Error(`the writer made only ${writes.length} writes`);
    return { writes, mark };
  }

  async function rowsOf(database: string): Promise<Row[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, v, at FROM \`${database}\`.items ORDER BY id`);
    return rows.map((row) => ({ id: Number(row.id), v: Number(row.v), at: String(row.at) }));
  }

  /** The server's databases whose name starts with `prefix`. */
  async function databasesLike(prefix: string): Promise<string[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW DATABASES').catch(() => [[] as mysql.RowDataPacket[]]);
    return rows.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(prefix));
  }
});

/** The base backup at the destination's root: the backup whose sidecar has a MySQL `pointInTime`. */
async function findBase(folder: string): Promise<string> {
  for (const name of await readdir(folder)) {
    if (!name.endsWith('.meta.json')) continue;
    const meta = JSON.parse(await readFile(join(folder, name), 'utf8')) as { pointInTime?: { logKind?: string } };
    if (meta.pointInTime?.logKind === 'mysql-binlog') return join(folder, name.slice(0, -'.meta.json'.length));
  }
  throw new Error(`no MySQL base backup in ${folder}: ${(await readdir(folder)).join(', ')}`);
}

/** The table as of just before `second`: the seeded rows, then every write whose statement started before it. */
function stateBefore(seeded: Row[], writes: Write[], second: number): Row[] {
  const rows = new Map(seeded.map((row) => [row.id, row]));
  for (const write of writes.filter((candidate) => candidate.second < second)) rows.set(write.id, { id: write.id, v: write.v, at: write.at });
  return [...rows.values()].sort((a, b) => a.id - b.id);
}
