// Issue 44 scope 3, a GTID target through Holdfast: POST /api/jobs/:id/point-in-time/restore with
// { type: 'gtid', gtid } restores one database of a MySQL/MariaDB point-in-time job exactly up to and including the
// transaction with that GTID. Real everything: the shared MariaDB PITR server (127.0.0.1:3307, binary logging on) in
// point-in-time mode with a 1 s flush, the MySQL source, a local destination; the engine reads the base and the
// binary log from the destination (the source reads each file twice: once to find the GTID, once to replay). Each
// write after the base records @@last_gtid and the table's rows right after its commit. A GTID the archive does not
// hold is queued (the engine cannot know without reading the log) and fails the run with the source's sentence,
// leaving no database.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourceMysql from '@holdfast/source-mysql';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mypitrgtid${SUFFIX}`;
const DB = `hf_pitr_gtid_e2e_${SUFFIX}`;
const WRITES = 8;

const connect = (database?: string) => mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password, database });

type Rows = Array<[number, number]>;

describe('MySQL/MariaDB point-in-time restore to a GTID through the route (real server)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let key: string;
  let dir: string;
  let admin: mysql.Connection;
  /** Each write's GTID and the table's rows right after its commit. */
  const writes: Array<{ gtid: string; rows: Rows }> = [];

  const rowsOf = async (name: string): Promise<Rows> => {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, val FROM \`${name}\`.items ORDER BY id`);
    return rows.map((row) => [Number(row.id), Number(row.val)]);
  };
  const exists = async (name: string) => {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
    return rows.length > 0;
  };
  const restore = (body: Record<string, unknown>) => call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: body });

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE DATABASE \`${DB}_nudge\``);
    await admin.query(`CREATE TABLE \`${DB}_nudge\`.ticks (at DATETIME(6) NOT NULL)`);
    dir = await mkdtemp(join(tmpdir(), 'hf-mysql-pitr-gtid-'));
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    const { user, password } = mariadb.users.admin;
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    key = await server.apiKey('mysql-pitr-gtid', ['history:read', 'jobs:read', 'jobs:execute', 'storage:restore']);
    server.catalog.addJob({ id: JOB, name: `mysql pitr gtid ${SUFFIX}`, databases: [DB] }, 'mariadb', [{ configId: 'disk' }]);

    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    await admin.query(`INSERT INTO \`${DB}\`.items VALUES (1, 10)`);
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');

    const writer = await connect(DB);
    try {
      for (let i = 0; i < WRITES; i++) {
        // Inserts, and every third write a transaction of two statements.
        if (i % 3 === 2) {
          await writer.query('BEGIN');
          await writer.query('INSERT INTO items VALUES (?, ?)', [100 + i, i]);
          await writer.query('UPDATE items SET val = val + 1 WHERE id = 1');
          await writer.query('COMMIT');
        } else {
          await writer.query('INSERT INTO items VALUES (?, ?)', [100 + i, i]);
        }
        const [[row]] = await writer.query<mysql.RowDataPacket[]>('SELECT @@last_gtid AS gtid');
        writes.push({ gtid: String(row!.gtid), rows: await rowsOf(DB) });
      }
    } finally {
      await writer.end();
    }
    const lastWrite = Date.now();
    let nudged = 0;
    await until(
      'a window that ends after the last write',
      async () => {
        if (Date.now() - nudged > 500) {
          nudged = Date.now();
          await admin.query(`INSERT INTO \`${DB}_nudge\`.ticks VALUES (NOW(6))`);
        }
        const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
        const found = reply.body?.data?.window;
        return found && Date.parse(found.end) >= lastWrite ? found : undefined;
      },
      60_000,
    );
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    if (admin) {
      const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW DATABASES');
      for (const name of rows.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(DB))) {
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      }
      await admin.end().catch(() => undefined);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('restores exactly up to and including the transaction with the GTID (a transaction of two statements)', async () => {
    const chosen = writes[5]!; // i = 5: the second transaction of two statements
    expect(chosen.rows).not.toEqual(writes[4]!.rows);
    expect(chosen.rows).not.toEqual(writes[6]!.rows);
    const into = `${DB}_at_gtid`;
    const reply = await restore({ target: { type: 'gtid', gtid: chosen.gtid }, database: DB, targetDatabase: into });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId, 180_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Success');
    expect(logs).toContain(`GTID ${chosen.gtid} (its transaction included)`);
    expect(logs).toContain(`the transaction of GTID ${chosen.gtid} ends at mysql-bin.`);
    expect(await rowsOf(into)).toEqual(chosen.rows);
  }, 240_000);

  it('a GTID the archive does not hold is queued, then fails the run with the source\'s sentence and leaves no database', async () => {
    const [domain, serverId, sequence] = writes.at(-1)!.gtid.split('-');
    const gtid = `${domain}-${serverId}-${BigInt(sequence!) + 1_000_000n}`;
    const into = `${DB}_missing`;
    const reply = await restore({ target: { type: 'gtid', gtid }, database: DB, targetDatabase: into });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId, 180_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status).toBe('Failed');
    expect(logs).toContain(`GTID ${gtid} is not in the archived binary log from this base's start`);
    expect(await exists(into)).toBe(false);
  }, 240_000);
});
