// POST /api/jobs/:id/point-in-time/restore with a GTID target (issue 44 scope 3), against a real server (libsql,
// HTTP, engine, local destination) with the test-double sources of point-restore-mysql.test.ts: a MariaDB GTID is
// queued for a MySQL job and reaches the source's restoreToPoint as a position marked isGtid, from the OLDEST base of
// the window; malformed GTIDs, MySQL's uuid:n and any GTID for a PostgreSQL job are refused with 400 naming
// body.target.gtid, queueing nothing. The real restore to a GTID is adapters/source-mysql/test/pitr-gtid-target.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedBase } from '../../src/pitr/change-log-store.js';
import { chooseBase } from '../../src/pitr/restore/choose-base.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { mysqlPitrDoubleSource, mysqlRestores, nextMysqlBase } from './mysql-pitr-doubles.js';
import { scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const JOB = 'job-mysql';
const at = (seconds: number) => new Date(Date.UTC(2026, 11, 6, 3, 0, seconds));

describe('point-in-time restore route, GTID targets (test double sources)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dir: string;
  let key: string;
  const post = (body: unknown, jobId = JOB) => call(server.url, 'POST', `/api/jobs/${jobId}/point-in-time/restore`, { key, json: body });
  const good = { target: { type: 'time', time: at(8).toISOString() }, database: 'shop', targetDatabase: 'shop_copy' };

  beforeAll(async () => {
    scriptedLogs.clear();
    mysqlRestores.length = 0;
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [mysqlPitrDoubleSource] as unknown as AnyAdapterDefinition[] });
    dir = await mkdtemp(join(tmpdir(), 'hf-pitr-gtid-route-'));
    server.catalog.addConfig({ configId: 'my', name: 'MariaDB', kind: 'source', adapterId: 'mysql-pitr-double', config: { existing: ['shop', 'crm', 'Legacy'], label: 'own' } });
    // Other servers of the same adapter for targetSourceId: one that holds "archive" (not on the job's server), one
    // excluded from restores, one whose configuration the adapter refuses (as the MySQL source refuses SSH there).
    server.catalog.addConfig({ configId: 'my-other', name: 'MariaDB reporting', kind: 'source', adapterId: 'mysql-pitr-double', config: { existing: ['archive', 'Reports'], label: 'other' } });
    server.catalog.addConfig({ configId: 'my-excluded', name: 'MariaDB production 2', kind: 'source', adapterId: 'mysql-pitr-double', excludeFromRestore: true, config: { existing: [] } });
    server.catalog.addConfig({ configId: 'my-broken', name: 'MariaDB broken', kind: 'source', adapterId: 'mysql-pitr-double', config: { existing: 'not a list' } });
    server.catalog.addConfig({ configId: 'my-down', name: 'MariaDB (down)', kind: 'source', adapterId: 'mysql-pitr-double', config: { existing: [], listFails: true } });
    server.catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addJob({ id: JOB, name: 'shop binlog', testRestore: { target: { type: 'directory', path: dir } } }, 'my', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'job-pg', name: 'cluster' }, 'pg', [{ configId: 'disk' }]);
    key = await server.apiKey('restorer', ['history:read', 'jobs:execute', 'storage:restore']);

    // A base backup of "shop" and "crm" at mysql-bin.000003:1234, then the binary log after it.
    const log = scriptedLog(JOB);
    await until('the stream to open', () => log.opens.length === 1);
    nextMysqlBase.databases = ['crm', 'shop'];
    nextMysqlBase.info = {
      logKind: 'mysql-binlog',
      startPosition: 'mysql-bin.000003:1234',
      stopPosition: 'mysql-bin.000003:1234',
      startSegment: 'mysql-bin.000003',
      timeline: 1,
      systemId: 'db1:server_id=1',
      serverVersion: '10.11.0-MariaDB',
      startedAt: at(-1),
      consistentAt: at(0),
    };
    const run = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(run.status).toBe(200);
    const done = await waitForEnd(server.url, key, run.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    await log.emit({ name: 'mysql-bin.000003', bytes: Buffer.from('binlog three'), coversUntil: at(5) });
    await log.emit({ name: 'mysql-bin.000004', bytes: Buffer.from('binlog four'), coversUntil: at(10) });
    await log.emit({ name: 'mysql-bin.000005', bytes: Buffer.from('binlog five, partial'), partial: true, coversUntil: at(20) });
    await until('three pieces archived', () => log.archived.length === 3);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('queues a MariaDB GTID for a MySQL job: the run passes it as a position marked isGtid and says it in its log', async () => {
    const reply = await post({ ...good, target: { type: 'gtid', gtid: '0-1-352' } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs).toBe('Success');
    expect(logs).toContain('GTID 0-1-352 (its transaction included)');
    const restored = mysqlRestores.pop()!;
    expect(restored.input.target).toEqual({ type: 'position', position: '0-1-352', isGtid: true });
    expect(restored.input.database).toEqual({ name: 'shop', into: 'shop_copy' });
    expect(restored.input.base).toMatchObject({ startPosition: 'mysql-bin.000003:1234' });
  });

  it('refuses malformed GTIDs and MySQL uuid:n with 400 naming body.target.gtid, queueing nothing', async () => {
    const restoresBefore = mysqlRestores.length;
    const cases: Array<[string, string]> = [
      ['0-1', 'domain-server-sequence'],
      ['0-1-352,0-1-353', 'domain-server-sequence'],
      ['mysql-bin.000004:120', 'domain-server-sequence'],
      ['3E11FA47-71CA-11E1-9E33-C80AA9429562:23', "MySQL's form"],
      ['0-1-0', 'out of range'],
      ['4294967296-1-1', 'out of range'],
      ['0-1-18446744073709551616', 'out of range'],
    ];
    for (const [gtid, says] of cases) {
      const reply = await post({ ...good, target: { type: 'gtid', gtid } });
      expect(reply.status, JSON.stringify({ gtid, reply: reply.body })).toBe(400);
      expect(reply.body.error).toContain('target.gtid');
      expect(reply.body.error).toContain(says);
    }
    const extra = await post({ ...good, target: { type: 'gtid', gtid: '0-1-352', position: 'mysql-bin.000004:120' } });
    expect(extra.status).toBe(400);
    expect(mysqlRestores.length).toBe(restoresBefore);
  });

  it('refuses a GTID target for a PostgreSQL job with 400 naming body.target.gtid', async () => {
    const reply = await post({ target: { type: 'gtid', gtid: '0-1-352' }, targetPath: join(dir, 'r') }, 'job-pg');
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body.error).toContain('body.target.gtid');
    expect(reply.body.error).toContain('MySQL/MariaDB only');
  });
});

describe('the base a GTID target starts from', () => {
  const base = (id: string, file: string, second: number): RecordedBase => ({
    executionId: id,
    jobId: 'job',
    storageKey: `${id}.sql.zst.enc`,
    logKind: 'mysql-binlog',
    startPosition: `${file}:4`,
    stopPosition: `${file}:4`,
    startSegment: file,
    timeline: 1,
    systemId: 'db1:server_id=1',
    serverVersion: '10.11.19-MariaDB',
    startedAt: at(second - 1),
    consistentAt: at(second),
    destinations: ['a', 'b'],
  });

  it('is the oldest of the window (where a GTID was logged is only known by reading the log), of the destination asked for', () => {
    const window = { start: at(0), end: at(50), baseExecutionId: 'first', timeline: 1 };
    const bases = [base('second', 'mysql-bin.000009', 30), base('first', 'mysql-bin.000003', 0), { ...base('only-b', 'mysql-bin.000005', 10), destinations: ['b'] }];
    expect(chooseBase(window, bases, { type: 'gtid', gtid: '0-1-352' }).executionId).toBe('first');
    expect(chooseBase(window, bases.slice(0, 1).concat(bases[2]!), { type: 'gtid', gtid: '0-1-352' }, 'b').executionId).toBe('only-b');
  });
});
