// Issue 44, the engine end to end for MySQL/MariaDB, real everything: the MariaDB PITR test server (127.0.0.1:3307,
// binary logging on, ROW), the MySQL source in point-in-time mode, a job encrypted with a key profile and compressed
// with ZSTD whose two destinations are S3 (the Ceph test gateway) and SFTP (the test sshd). The binary log stream
// runs, a base backup of the test's database is taken, a writer inserts and updates rows about every 100 ms for two
// minutes (as the issue asks) storing NOW() in each row, and three random whole-second instants plus `latest` are restored through
// POST /api/jobs/:id/point-in-time/restore into new databases on the same server. Each restored database must equal
// exactly the state the writer's own record gives for its target: a binary log event carries the second its
// statement started (the NOW() it stored), and a time target T replays every transaction that started before T's
// second and none from it on.
import { randomBytes, randomInt } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import sourceMysql from '@holdfast/source-mysql';
import storageS3 from '@holdfast/storage-s3';
import storageSftp from '@holdfast/storage-sftp';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const WRITE_FOR_MS = 120_000;
const WRITE_EVERY_MS = 100;

const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };
const rgw = JSON.parse(await readFile(`${SERVICES}/ceph-rgw/ceph-rgw.json`, 'utf8')) as { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
const sshd = JSON.parse(await readFile(`${SERVICES}/sshd/sshd.json`, 'utf8')) as { host: string; port: number; user: string; password: string; home: string };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mypitre2e${SUFFIX}`;
/** The test's database; every database it creates (the restores) starts with this name. */
const DB = `hf_pitr_e2e_${SUFFIX}`;
const BUCKET = `holdfast-mysql-pitr-e2e-${SUFFIX}`;

/** One row as the writer left it: `at` is the NOW() of the statement that wrote it (UTC, whole seconds). */
interface Row {
  id: number;
  v: number;
  at: string;
}

/** One autocommitted insert or update of the writer, with the second its statement started (its binlog time). */
interface Write extends Row {
  second: number;
}

/** An administrator connection (UTC session, DATETIME as text so values compare exactly). */
const connect = (database?: string) =>
  mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password, database, timezone: 'Z', dateStrings: true });

describe('MySQL/MariaDB point-in-time restore through the API, S3 and SFTP, encrypted (issue 44)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let key: string;
  let sftpRoot: string;
  let s3: S3Client;
  let admin: mysql.Connection;

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, v INT NOT NULL, at DATETIME NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE DATABASE \`${DB}_nudge\``);
    await admin.query(`CREATE TABLE \`${DB}_nudge\`.ticks (at DATETIME(6) NOT NULL)`);
    s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    sftpRoot = join(sshd.home, `holdfast-mysql-pitr-e2e-${SUFFIX}`);
    await mkdir(sftpRoot);
    const home = await stat(sshd.home);
    await chown(sftpRoot, home.uid, home.gid);

    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql, storageS3, storageSftp] as unknown as AnyAdapterDefinition[] });
    const { user, password } = mariadb.users.admin;
    // The administrator account: the stream needs REPLICATION SLAVE/CLIENT, the restore creates and fills a database.
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 's3', name: 'Ceph S3', kind: 'storage', adapterId: 's3', config: { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, bucket: BUCKET, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    server.catalog.addConfig({ configId: 'sftp', name: 'SFTP', kind: 'storage', adapterId: 'sftp', config: { host: sshd.host, port: sshd.port, username: sshd.user, password: sshd.password, root: sftpRoot } });
    key = await server.apiKey('mysql-pitr-e2e', ['history:read', 'jobs:execute', 'storage:restore']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (admin) {
      // The test's database and every restore of it, whatever happened (exact prefix: `_` is a LIKE wildcard).
      const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW DATABASES').catch(() => [[] as mysql.RowDataPacket[]]);
      for (const name of rows.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(DB))) {
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      }
      await admin.end().catch(() => undefined);
    }
    if (s3) {
      for (;;) {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET })).catch(() => null);
        const objects = (page?.Contents ?? []).map((object) => ({ Key: object.Key! }));
        if (objects.length === 0) break;
        await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: objects } }));
      }
      await s3.send(new DeleteBucketCommand({ Bucket: BUCKET })).catch(() => undefined);
      s3.destroy();
    }
    if (sftpRoot) await rm(sftpRoot, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('restores three random instants and latest into new databases, each exactly the writer\'s state at its target; bad requests change nothing', async () => {
    server.catalog.addJob({ id: JOB, name: `mysql pitr e2e ${SUFFIX}`, compression: 'ZSTD', databases: [DB] }, 'mariadb', [{ configId: 's3', priority: 0 }, { configId: 'sftp', priority: 1 }], { profileId: 'profile', key: randomBytes(32) });
    // The stream starts with the server's current binary log file: it must hold the base's coordinates, so the base
    // is taken once the stream has archived something (a write of the test's own makes sure there is something).
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    const seeded = await seed();
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);

    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
    const [recordedBase] = await server.changeLogs.basesOf(JOB);
    expect(recordedBase).toMatchObject({ logKind: 'mysql-binlog', timeline: 1 });

    const writes = await writeRows(seeded);
    const lastWrite = writes[writes.length - 1]!;
    const writerEnded = Date.now();
    // A partial is archived only after the binary log grew: on a quiet server the window would end before the last
    // write until someone writes (CI timed out here once). A side database's table (not the job's) is written meanwhile.
    let nudged = 0;
    const window = await until(
      'a window that ends after the last write',
      async () => {
        if (Date.now() - nudged > 500) {
          nudged = Date.now();
          await admin.query(`INSERT INTO \`${DB}_nudge\`.ticks VALUES (NOW(6))`);
        }
        const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
        const found = reply.body?.data?.window;
        return found && Date.parse(found.end) >= writerEnded ? (found as { start: string; end: string }) : undefined;
      },
      60_000,
    ).then((found) => found!);
    const pieces = await server.changeLogs.piecesOf(JOB);
    expect(pieces.every((piece) => piece.destinations.includes('s3') && piece.destinations.includes('sftp'))).toBe(true);
    expect(pieces.every((piece) => piece.storageKey.endsWith('.zst.enc'))).toBe(true);

    // Refusals against the real server, before anything is queued.
    const restore = (body: Record<string, unknown>) => call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: body });
    const exists = await restore({ target: { type: 'latest' }, database: DB, targetDatabase: DB });
    expect(exists.status, JSON.stringify(exists.body)).toBe(409);
    expect(exists.body.error).toContain('already exists');
    const notInBase = await restore({ target: { type: 'latest' }, database: `${DB}_other`, targetDatabase: `${DB}_never` });
    expect(notInBase.status, JSON.stringify(notInBase.body)).toBe(422);
    expect(notInBase.body.error).toContain(`it holds "${DB}"`);
    const folder = await restore({ target: { type: 'latest' }, database: DB, targetDatabase: `${DB}_never`, targetPath: '/tmp/nowhere' });
    expect(folder.status).toBe(400);
    const beforeWindow = await restore({ target: { type: 'time', time: new Date(Date.parse(window.start) - 3_600_000).toISOString() }, database: DB, targetDatabase: `${DB}_never` });
    expect(beforeWindow.status).toBe(422);

    // Three distinct whole seconds, each after the first write's second and at most the last one's, so each target
    // keeps some writes and drops others; then latest. Two restores run side by side.
    const seconds = [...new Set(writes.map((write) => write.second))].filter((second) => second > writes[0]!.second && second <= lastWrite.second);
    expect(seconds.length).toBeGreaterThanOrEqual(3);
    const picked = new Set<number>();
    while (picked.size < 3) picked.add(seconds[randomInt(seconds.length)]!);
    const targets = [...picked].sort((a, b) => a - b).map((second, index) => ({ second, into: `${DB}_t${index + 1}`, destinationId: ['s3', 'sftp', undefined][index] }));
    server.settings.values.set('maxConcurrentJobs', 2);
    const queued = await Promise.all([
      ...targets.map(async ({ second, into, destinationId }) => {
        const reply = await restore({ target: { type: 'time', time: new Date(second * 1000).toISOString() }, database: DB, targetDatabase: into, ...(destinationId ? { destinationId } : {}) });
        expect(reply.status, JSON.stringify(reply.body)).toBe(202);
        return { label: `time ${new Date(second * 1000).toISOString()} from ${destinationId ?? 'the destinations by priority'}`, into, expected: stateBefore(seeded, writes, second), executionId: reply.body.data.executionId as string };
      }),
      (async () => {
        const reply = await restore({ target: { type: 'latest' }, database: DB, targetDatabase: `${DB}_latest` });
        expect(reply.status, JSON.stringify(reply.body)).toBe(202);
        return { label: 'latest', into: `${DB}_latest`, expected: stateBefore(seeded, writes, Infinity), executionId: reply.body.data.executionId as string };
      })(),
    ]);
    for (const { label, into, expected, executionId } of queued) {
      const done = await waitForEnd(server.url, key, executionId, 120_000);
      const logs = JSON.stringify(done.logs);
      expect(done.status, `${label}: ${logs.slice(-3_000)}`).toBe('Success');
      expect(logs).toContain(`into the new database \\"${into}\\"`);
      const archived = (await server.changeLogs.piecesOf(JOB)).map((piece) => `${piece.name}${piece.partial ? ' (partial)' : ''}`).join(', ');
      expect(await rowsOf(into), `${label}; base ${recordedBase!.startPosition}; archived ${archived}; run log ${logs.slice(-2_500)}`).toEqual(expected);
    }
    // The instants differ: the three restores are not all the same state.
    expect(new Set(queued.map(({ expected }) => JSON.stringify(expected))).size).toBeGreaterThan(1);
    // Two minutes of writing, then four restores: about 150 s on a quiet machine; the bound leaves room for a loaded one.
  }, 480_000);

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
   * One autocommitted statement about every {@link WRITE_EVERY_MS} for {@link WRITE_FOR_MS}: a new row, or an
   * update of a random row, each storing NOW(). The row is read back after each statement: its `at` is the
   * statement's NOW(), the second its binary log events carry.
   */
  async function writeRows(seeded: Row[]): Promise<Write[]> {
    const writer = await connect(DB);
    const writes: Write[] = [];
    let nextId = seeded.length + 1;
    try {
      const end = Date.now() + WRITE_FOR_MS;
      while (Date.now() < end) {
        const isInsert = randomInt(2) === 0;
        const id = isInsert ? nextId++ : 1 + randomInt(nextId - 1);
        if (isInsert) await writer.query('INSERT INTO items VALUES (?, 1, NOW())', [id]);
        else await writer.query('UPDATE items SET v = v + 1, at = NOW() WHERE id = ?', [id]);
        const [rows] = await writer.query<mysql.RowDataPacket[]>('SELECT v, at, UNIX_TIMESTAMP(at) AS second FROM items WHERE id = ?', [id]);
        writes.push({ id, v: Number(rows[0]!.v), at: String(rows[0]!.at), second: Number(rows[0]!.second) });
        await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    return writes;
  }

  async function rowsOf(database: string): Promise<Row[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, v, at FROM \`${database}\`.items ORDER BY id`);
    return rows.map((row) => ({ id: Number(row.id), v: Number(row.v), at: String(row.at) }));
  }
});

/** The table as of just before `second`: the seeded rows, then every write whose statement started before it. */
function stateBefore(seeded: Row[], writes: Write[], second: number): Row[] {
  const rows = new Map(seeded.map((row) => [row.id, row]));
  for (const write of writes.filter((candidate) => candidate.second < second)) rows.set(write.id, { id: write.id, v: write.v, at: write.at });
  return [...rows.values()].sort((a, b) => a.id - b.id);
}
