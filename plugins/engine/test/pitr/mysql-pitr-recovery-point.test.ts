// Issue 44 acceptance 3, the short automated check (the 5-minute figures come from
// `node tooling/bench/pitr-recovery-point.mjs --engine=mariadb` and are in docs/pitr.md, MySQL "Measured"): the MariaDB
// PITR test server (127.0.0.1:3307), the MySQL source in point-in-time mode with a 1 s flush interval, one local
// destination, one base backup of the test's own database; then one commit a second for 30 s while the window is read
// from GET /api/jobs/:id/point-in-time every second. The newest archived binary log data must never be older than the
// flush interval plus 10 s, and every commit must be covered by the window within that time. The server is shared
// with other test files (other writers, rotations): the test only relies on its own commits.
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
const FLUSH_SECONDS = 1;
const BOUND_MS = (FLUSH_SECONDS + 10) * 1000;
const WRITE_FOR_MS = 30_000;

const mariadb = JSON.parse(await readFile(`${SERVICES}/mariadb-pitr/mariadb-pitr.json`, 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };
const SUFFIX = randomBytes(4).toString('hex');
const JOB = `mypitrrp${SUFFIX}`;
const DB = `hf_pitr_rp_${SUFFIX}`;
const connect = () => mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: mariadb.users.admin.user, password: mariadb.users.admin.password });

interface Sample {
  at: number;
  end: number | null;
}

describe('MySQL/MariaDB recovery point with one commit a second (issue 44 acceptance 3)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let key: string;
  let dest: string;
  let admin: mysql.Connection;

  beforeAll(async () => {
    admin = await connect();
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.commits (id INT PRIMARY KEY, committed_at DATETIME(6) NOT NULL) ENGINE=InnoDB`);
    dest = await mkdtemp(join(tmpdir(), 'hf-mysql-pitr-rp-'));
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    const { user, password } = mariadb.users.admin;
    server.catalog.addConfig({ configId: 'mariadb', name: 'MariaDB PITR', kind: 'source', adapterId: 'mysql', config: { mode: 'point-in-time', host: mariadb.host, port: mariadb.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: FLUSH_SECONDS } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dest } });
    key = await server.apiKey('mysql-pitr-rp', ['history:read', 'jobs:execute']);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\``).catch(() => undefined);
    await admin?.end().catch(() => undefined);
    if (dest) await rm(dest, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('never lets the newest archived binary log data lag the newest commit by more than the flush interval plus 10 s', async () => {
    server.catalog.addJob({ id: JOB, name: `mysql pitr recovery point ${SUFFIX}`, compression: 'ZSTD', databases: [DB] }, 'mariadb', [{ configId: 'disk', priority: 0 }]);
    // The stream starts with the server's current binary log file, which must hold the base's coordinates: the base
    // follows a first archived piece (the test's own write makes sure the file grows).
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    await admin.query(`INSERT INTO \`${DB}\`.commits VALUES (0, NOW(6))`);
    await until('a first archived piece', async () => (await server.changeLogs.piecesOf(JOB)).length > 0, 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
    const windowEnd = async (): Promise<number | null> => {
      const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
      expect(reply.status).toBe(200);
      const found = reply.body.data.window as { end: string } | null;
      return found ? Date.parse(found.end) : null;
    };
    // A window needs an archived piece after the base, and a partial is only taken when the file grew: on a server
    // nobody else writes to, that takes a write (seen: no window for a minute on a quiet server without this).
    await admin.query(`INSERT INTO \`${DB}\`.commits VALUES (-1, NOW(6))`);
    await until('a window', windowEnd, 60_000);
    // The acceptance is about a stream that keeps up, not one catching up: the shared server may have a backlog of
    // other files' writes to archive first (seen: ages of 9-14 s for the first six samples while a 700 MB bench wrote
    // beside it). One commit a second until the window reaches within 2 s of the last one, at most a minute.
    for (let warm = -2, caughtUp = false; !caughtUp; warm--) {
      expect(warm, 'the stream did not catch up with the server within a minute').toBeGreaterThan(-62);
      const committedAt = Date.now();
      await admin.query(`INSERT INTO \`${DB}\`.commits VALUES (?, NOW(6))`, [warm]);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const end = await windowEnd();
      caughtUp = end !== null && end >= committedAt - 2000;
    }

    const commits: number[] = [];
    const samples: Sample[] = [];
    const writeUntil = Date.now() + WRITE_FOR_MS;
    const writer = await connect();
    /** Where the server's binary log was just after the last commit returned. */
    let afterLastCommit: { file: string; position: number } | undefined;
    const writing = (async () => {
      try {
        for (let id = 1; Date.now() < writeUntil; id++) {
          const tick = Date.now();
          await writer.query(`INSERT INTO \`${DB}\`.commits VALUES (?, NOW(6))`, [id]);
          commits.push(Date.now());
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
        }
        const [status] = await writer.query<mysql.RowDataPacket[]>('SHOW MASTER STATUS');
        afterLastCommit = { file: String(status[0]!.File), position: Number(status[0]!.Position) };
      } finally {
        await writer.end();
      }
    })();
    // Sampling goes on past the last commit for the bound, so the last commits must be seen covered too.
    while (Date.now() < writeUntil + BOUND_MS) {
      const tick = Date.now();
      const end = await windowEnd();
      samples.push({ at: Date.now(), end });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
    }
    await writing;

    const during = samples.filter((sample) => sample.at <= writeUntil);
    expect(during.length).toBeGreaterThanOrEqual(WRITE_FOR_MS / 1000 - 5);
    const ages = during.map((sample) => (sample.end === null ? Infinity : sample.at - sample.end));
    expect(Math.max(...ages), `ages (ms): ${ages.join(', ')}`).toBeLessThanOrEqual(BOUND_MS);
    // The window follows the writer: it moved by most of the writing time (a frozen window would fail here).
    expect(during[during.length - 1]!.end! - during[0]!.end!).toBeGreaterThan(WRITE_FOR_MS - BOUND_MS);
    expect(commits.length).toBeGreaterThanOrEqual(WRITE_FOR_MS / 1000 - 5);
    for (const committedAt of commits) {
      const covering = samples.find((sample) => sample.end !== null && sample.end >= committedAt);
      expect(covering, `the commit at ${new Date(committedAt).toISOString()} was never covered by the window`).toBeDefined();
      expect(covering!.at - committedAt).toBeLessThanOrEqual(BOUND_MS);
    }
    // What the window claims is really archived: a piece of the file being written reaches the position the server's
    // log had just after the last commit (so it holds every commit of the test), or that file was completed and a
    // later one archived.
    const pieces = await server.changeLogs.piecesOf(JOB);
    const reached = pieces.some((piece) => (piece.name === afterLastCommit!.file && piece.plainSize >= afterLastCommit!.position) || piece.name > afterLastCommit!.file);
    expect(reached, `after the last commit ${JSON.stringify(afterLastCommit)}; archived ${pieces.map((piece) => `${piece.name}:${piece.plainSize}${piece.partial ? 'p' : ''}`).join(', ')}`).toBe(true);
  }, 180_000);
});
