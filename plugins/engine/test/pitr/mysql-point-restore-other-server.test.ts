// Issue 44 scope 3, "or into another server": POST /api/jobs/:id/point-in-time/restore with targetSourceId builds
// the new database on the server of another stored MySQL source configuration. Real everything: the job's source is
// the shared MariaDB PITR server (127.0.0.1:3307, binary logging on) in point-in-time mode with a 1 s flush, the other
// server a throwaway MariaDB of the test's own (mysql-fault-server.ts, a logical-mode configuration), a local
// destination. A writer inserts one row about every 100 ms after the base backup storing its statement's NOW(); the
// restored database on the other server must hold exactly the rows the source table holds from before the target's
// second (a time target T replays every transaction that began before T's second and none from it on), and the
// job's own server must never show the new database (polled every 50 ms while the run goes on). The refusals are
// checked against the real servers: a name that exists on the other server only (409), an SSH configuration (422),
// another adapter (422), an unknown id (404). Without targetSourceId the job's own server is restored to, as before.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourceMysql from '@holdfast/source-mysql';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import { ORM_DATABASE } from '@holdfast/orm-port';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../../src/index.js';
import { ExecutionEntity } from '../../src/store/entities.js';
import { parseMetadata } from '../../src/store/metadata.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { OwnMariadb } from './mysql-fault-server.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mypitrother${SUFFIX}`;
/** The test's database on the shared server (the job backs up only this one). */
const DB = `hf_pitr_other_${SUFFIX}`;
/** The new database the restore builds on the other server. */
const INTO = `${DB}_restored`;
const SEEDED = 5;
const WRITE_FOR_MS = 8_000;
const WRITE_EVERY_MS = 100;

/** An administrator connection to the shared server (UTC session). */
const connect = (database?: string) => mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password, database, timezone: 'Z', dateStrings: true });

describe('MySQL/MariaDB point-in-time restore onto another server (targetSourceId)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let store: ExecutionStore;
  let key: string;
  let dir: string;
  let admin: mysql.Connection;
  let other: OwnMariadb | undefined;

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY, at DATETIME NOT NULL) ENGINE=InnoDB`);
    await admin.query(`CREATE DATABASE \`${DB}_nudge\``);
    await admin.query(`CREATE TABLE \`${DB}_nudge\`.ticks (at DATETIME(6) NOT NULL)`);
    dir = await mkdtemp(join(tmpdir(), 'hf-mysql-pitr-other-'));
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    store = new ExecutionStore(server.handle.container.resolve(ORM_DATABASE));
    const { user, password } = mariadb.users.admin;
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: 1 } });
    other = await OwnMariadb.create({ user: 'holdfast_other', password: randomBytes(12).toString('hex') });
    server.catalog.addConfig({ configId: 'mariadb-other', name: 'MariaDB other', kind: 'source', adapterId: 'mysql', config: { host: '127.0.0.1', port: other.port, ...other.admin, tls: 'disable' } });
    // A configuration whose tools run over SSH: the restore runs mariadb-binlog and the client on the Holdfast host.
    server.catalog.addConfig({
      configId: 'mariadb-ssh',
      name: 'MariaDB over SSH',
      kind: 'source',
      adapterId: 'mysql',
      config: { host: '127.0.0.1', port: other.port, ...other.admin, ssh: { host: '127.0.0.1', port: 22, username: 'nobody', hostKeySha256: `SHA256:${'A'.repeat(43)}` } },
    });
    server.catalog.addConfig({ configId: 'cluster', name: 'PostgreSQL cluster', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', port: 5432, user: 'postgres' } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    key = await server.apiKey('mysql-pitr-other-server', ['history:read', 'jobs:read', 'jobs:execute', 'storage:restore']);
    server.catalog.addJob({ id: JOB, name: `mysql pitr other server ${SUFFIX}`, databases: [DB] }, 'mariadb', [{ configId: 'disk' }]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (admin) {
      for (const name of await ownDatabases(DB)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
      await admin.end().catch(() => undefined);
    }
    await other?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  /** Databases of the shared server whose name starts with `prefix` (compared in JavaScript: `_` is a LIKE wildcard). */
  async function ownDatabases(prefix: string): Promise<string[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SHOW DATABASES');
    return rows.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(prefix));
  }

  const otherHas = async (name: string) => (await other!.sql('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length > 0;
  const restore = (body: Record<string, unknown>) => call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: body });

  it('restores a time target into a new database on the other server with exactly the rows before it; the job\'s server gets none', async () => {
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    const seeder = await connect(DB);
    for (let id = 1; id <= SEEDED; id++) await seeder.query('INSERT INTO items VALUES (?, NOW())', [id]);
    await seeder.end();
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const seconds = await writeRows();
    const writerEnded = Date.now();
    // A partial is archived only after the binary log grew: a side database is written until the window covers the writes.
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
        return found && Date.parse(found.end) >= writerEnded ? found : undefined;
      },
      60_000,
    );

    // A second in the middle of the writes: some rows before it, some from it on.
    const distinct = [...new Set(seconds)].sort((a, b) => a - b);
    const targetSecond = distinct[Math.floor(distinct.length / 2)]!;
    const [expectedRows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, at FROM \`${DB}\`.items WHERE at < FROM_UNIXTIME(?) ORDER BY id`, [targetSecond]);
    expect(expectedRows.length).toBe(SEEDED + seconds.filter((second) => second < targetSecond).length);
    expect(expectedRows.length).toBeLessThan(SEEDED + seconds.length);

    const reply = await restore({ target: { type: 'time', time: new Date(targetSecond * 1000).toISOString() }, database: DB, targetDatabase: INTO, targetSourceId: 'mariadb-other' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const executionId = reply.body.data.executionId as string;
    const seen = { own: false, other: false };
    let isRunning = true;
    const watching = (async () => {
      while (isRunning) {
        if ((await ownDatabases(INTO)).length > 0) seen.own = true;
        if (await otherHas(INTO)) seen.other = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const done = await waitForEnd(server.url, key, executionId, 180_000).finally(() => (isRunning = false));
    await watching;
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Success');
    expect(seen).toEqual({ own: false, other: true });
    expect(await ownDatabases(INTO)).toEqual([]);

    const restored = await other!.sql<{ id: number; at: string }>(`SELECT id, at FROM \`${INTO}\`.items ORDER BY id`);
    expect(restored.map((row) => [Number(row.id), row.at])).toEqual(expectedRows.map((row) => [Number(row.id), row.at]));

    // The log and the record name the server it went to.
    const label = `MariaDB other (127.0.0.1:${other!.port})`;
    expect(logs).toContain(`into the new database \\"${INTO}\\" on the server of source \\"${label}\\" (targetSourceId mariadb-other)`);
    const row = await store.get(executionId);
    expect(parseMetadata(row!.metadata).pointRestore).toMatchObject({ database: { name: DB, into: INTO }, targetSource: { id: 'mariadb-other', name: label } });
    expect(JSON.parse(row!.request ?? '{}').targetSource).toEqual({ id: 'mariadb-other', name: label });
  }, 300_000);

  it('refuses, against the real servers and queueing nothing: a name that exists on the other server (409), SSH and another adapter (422), an unknown id (404)', async () => {
    // INTO now exists on the other server only: the check asks that server, not the job's.
    expect(await otherHas(INTO)).toBe(true);
    expect(await ownDatabases(INTO)).toEqual([]);
    const before = await store.em().count(ExecutionEntity, {});
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ targetDatabase: INTO, targetSourceId: 'mariadb-other' }, 409, `targetDatabase "${INTO}" already exists on MariaDB other (127.0.0.1:${other!.port})`],
      [{ targetDatabase: `${DB}_x`, targetSourceId: 'mariadb-ssh' }, 422, 'targetSourceId: source "MariaDB over SSH" cannot take a point-in-time restore: [source-mysql] invalid configuration: ssh: mode "point-in-time" cannot be combined with ssh'],
      [{ targetDatabase: `${DB}_x`, targetSourceId: 'cluster' }, 422, 'targetSourceId: source "PostgreSQL cluster" is a postgres source'],
      [{ targetDatabase: `${DB}_x`, targetSourceId: 'nowhere' }, 404, 'targetSourceId "nowhere" is not a stored source configuration'],
    ];
    for (const [fields, status, message] of cases) {
      const reply = await restore({ target: { type: 'latest' }, database: DB, ...fields });
      expect(reply.status, JSON.stringify({ fields, reply: reply.body })).toBe(status);
      expect(reply.body.error).toContain(message);
    }
    expect(await store.em().count(ExecutionEntity, {})).toBe(before);
    expect(await otherHas(`${DB}_x`)).toBe(false);
  });

  it('without targetSourceId restores latest onto the job\'s own server, as before, and the other server gets nothing', async () => {
    const into = `${DB}_own`;
    const reply = await restore({ target: { type: 'latest' }, database: DB, targetDatabase: into });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId, 120_000);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs.slice(-3_000)).toBe('Success');
    expect(logs).toContain(`into the new database \\"${into}\\" on the source's server`);
    const [original] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, at FROM \`${DB}\`.items ORDER BY id`);
    const [restored] = await admin.query<mysql.RowDataPacket[]>(`SELECT id, at FROM \`${into}\`.items ORDER BY id`);
    expect(restored).toEqual(original);
    expect(await otherHas(into)).toBe(false);
    const row = await store.get(reply.body.data.executionId);
    expect(parseMetadata(row!.metadata).pointRestore?.targetSource).toBeUndefined();
  }, 180_000);

  /** Writes one row about every {@link WRITE_EVERY_MS} for {@link WRITE_FOR_MS}; answers each row's NOW() second. */
  async function writeRows(): Promise<number[]> {
    const writer = await connect(DB);
    const seconds: number[] = [];
    try {
      const end = Date.now() + WRITE_FOR_MS;
      for (let id = SEEDED + 1; Date.now() < end; id++) {
        await writer.query('INSERT INTO items VALUES (?, NOW())', [id]);
        const [rows] = await writer.query<mysql.RowDataPacket[]>('SELECT UNIX_TIMESTAMP(at) AS second FROM items WHERE id = ?', [id]);
        seconds.push(Number(rows[0]!.second));
        await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    return seconds;
  }
});
