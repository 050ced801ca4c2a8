// POST /api/jobs/:id/point-in-time/restore for MySQL/MariaDB jobs (issue 44), against a real server (libsql, HTTP,
// engine, local destination) with the test-double sources: the body a MySQL job takes (database, targetDatabase; no
// targetPath, servePort nor restore point names; binary log positions; targetSourceId: another server of the same
// adapter), every refusal before queueing, what the run passes to the source's restoreToPoint (and through which
// configuration's instance), and the refusal of a PITR test restore of such a job to a directory target. The real
// restore onto another server is in mysql-point-restore-other-server.test.ts.
// The real restores are in mysql-pitr-end-to-end.test.ts, the real test restores in mysql-pitr-test-restore.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { TOKENS, type AccessPolicy, type AnyAdapterDefinition } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../../src/index.js';
import { ExecutionEntity } from '../../src/store/entities.js';
import { parseMetadata } from '../../src/store/metadata.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { mysqlPitrDoubleSource, mysqlRestores, nextMysqlBase } from './mysql-pitr-doubles.js';
import { scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const JOB = 'job-mysql';
const at = (seconds: number) => new Date(Date.UTC(2026, 11, 6, 3, 0, seconds));

describe('point-in-time restore route, MySQL/MariaDB jobs (test double source)', () => {
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
    dir = await mkdtemp(join(tmpdir(), 'hf-pitr-mysql-route-'));
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

  it('answers the window of a binary log job', async () => {
    const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ enabled: true, logKind: 'mysql-binlog', gaps: [], segments: 3, window: { start: at(0).toISOString(), end: at(20).toISOString() } });
  });

  it('refuses with 400 naming the field what a MySQL job does not take, and names it wrong', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...good, targetPath: join(dir, 'r') }, 'body.targetPath'],
      [{ ...good, servePort: 25_432 }, 'body.servePort'],
      [{ target: good.target, targetDatabase: 'x' }, 'body.database'],
      [{ target: good.target, database: 'shop' }, 'body.targetDatabase'],
      [{ ...good, target: { type: 'name', name: 'before-upgrade' } }, 'named restore points are PostgreSQL only'],
      [{ ...good, target: { type: 'position', position: '0/3000028' } }, 'target.position'],
      [{ ...good, target: { type: 'position', position: 'mysql-bin:12' } }, 'target.position'],
      [{ ...good, targetDatabase: 'a`b' }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'a/b' }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'trailing ' }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'n'.repeat(65) }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'nul\u0000' }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'shop->x' }, 'targetDatabase'],
      [{ ...good, targetDatabase: '' }, 'targetDatabase'],
      [{ ...good, targetDatabase: 'MySQL' }, 'system schema'],
      [{ ...good, targetDatabase: 'information_schema' }, 'system schema'],
    ];
    for (const [body, named] of cases) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify({ body, reply: reply.body })).toBe(400);
      expect(reply.body.error, JSON.stringify(body)).toContain(named);
    }
    // 64 characters (not bytes) is MySQL's limit: a 64-character name of multi-byte letters passes the name rules
    // and reaches the server check (it is new, so the request is queued).
    const longest = 'é'.repeat(64);
    const accepted = await post({ ...good, targetDatabase: longest });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect((await waitForEnd(server.url, key, accepted.body.data.executionId)).status).toBe('Success');
    expect(mysqlRestores.pop()?.input.database).toEqual({ name: 'shop', into: longest });
  });

  it('refuses a targetDatabase that exists (409), a database the base does not hold and targets outside the window (422)', async () => {
    const exists = await post({ ...good, targetDatabase: 'crm' });
    expect(exists.status).toBe(409);
    expect(exists.body.error).toContain('targetDatabase "crm" already exists on MariaDB');
    const otherCase = await post({ ...good, targetDatabase: 'LEGACY' });
    expect(otherCase.status).toBe(409);
    expect(otherCase.body.error).toContain('as "Legacy"');
    const missing = await post({ ...good, database: 'billing' });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toContain('database "billing" is not in base backup');
    expect(missing.body.error).toContain('it holds "crm", "shop"');
    const early = await post({ ...good, target: { type: 'time', time: at(-30).toISOString() } });
    expect(early.status).toBe(422);
    expect(early.body.error).toContain(`${at(0).toISOString()} .. ${at(20).toISOString()}`);
    const late = await post({ ...good, target: { type: 'time', time: at(21).toISOString() } });
    expect(late.status).toBe(422);
    const beforeBase = await post({ ...good, target: { type: 'position', position: 'mysql-bin.000003:1000' } });
    expect(beforeBase.status).toBe(422);
    expect(beforeBase.body.error).toContain('mysql-bin.000003:1234');
    expect((await post({ ...good, destinationId: 'elsewhere' })).status).toBe(400);
    expect(mysqlRestores).toEqual([]);
  });

  it('answers 502 when the server cannot be asked whether targetDatabase is new', async () => {
    server.catalog.addJob({ id: JOB, name: 'shop binlog' }, 'my-down', [{ configId: 'disk' }]);
    try {
      const reply = await post(good);
      expect(reply.status).toBe(502);
      expect(reply.body.error).toContain('ECONNREFUSED');
    } finally {
      server.catalog.addJob({ id: JOB, name: 'shop binlog', testRestore: { target: { type: 'directory', path: dir } } }, 'my', [{ configId: 'disk' }]);
    }
  });

  it('queues a restore of one database into a new one: the run passes database { name, into } and says it in its log and metadata', async () => {
    const reply = await post(good);
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs).toBe('Success');
    expect(logs).toContain('from database \\"shop\\" into the new database \\"shop_copy\\"');
    expect(logs).toContain('test double: replaying into shop_copy');
    const restored = mysqlRestores.pop()!;
    expect(restored.input.database).toEqual({ name: 'shop', into: 'shop_copy' });
    expect(restored.input.targetPath).toBeUndefined();
    expect(restored.input.servePort).toBeUndefined();
    expect(restored.input.target).toEqual({ type: 'time', time: at(8) });
    expect(restored.input.base).toMatchObject({ logKind: 'mysql-binlog', startSegment: 'mysql-bin.000003', startPosition: 'mysql-bin.000003:1234' });
    expect(restored.baseText).toBe(nextMysqlBase.bytes.toString());
    expect(restored.startSegmentText).toBe('binlog three');
    const row = await new ExecutionStore(server.handle.container.resolve(ORM_DATABASE)).get(reply.body.data.executionId);
    expect(parseMetadata(row!.metadata).pointRestore).toMatchObject({ jobId: JOB, database: { name: 'shop', into: 'shop_copy' }, recoveredTo: '2026-12-06T03:00:07.000Z' });
    expect(parseMetadata(row!.metadata).pointRestore?.targetPath).toBeUndefined();

    const byPosition = await post({ ...good, target: { type: 'position', position: 'mysql-bin.000004:120' }, destinationId: 'disk' });
    expect(byPosition.status, JSON.stringify(byPosition.body)).toBe(202);
    expect((await waitForEnd(server.url, key, byPosition.body.data.executionId)).status).toBe('Success');
    expect(mysqlRestores.pop()?.input.target).toEqual({ type: 'position', position: 'mysql-bin.000004:120' });
  });

  it('builds the new database on the server targetSourceId names: its own 409 check, the run restores through that configuration and names it', async () => {
    // "crm" exists on the job's server only: new on the other one, so it is accepted there.
    const reply = await post({ ...good, targetDatabase: 'crm', targetSourceId: 'my-other' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const done = await waitForEnd(server.url, key, reply.body.data.executionId);
    const logs = JSON.stringify(done.logs);
    expect(done.status, logs).toBe('Success');
    expect(logs).toContain('into the new database \\"crm\\" on the server of source \\"MariaDB reporting\\" (targetSourceId my-other)');
    const restored = mysqlRestores.pop()!;
    expect(restored.server).toBe('other');
    expect(restored.input.database).toEqual({ name: 'shop', into: 'crm' });
    const row = await new ExecutionStore(server.handle.container.resolve(ORM_DATABASE)).get(reply.body.data.executionId);
    expect(parseMetadata(row!.metadata).pointRestore).toMatchObject({ database: { name: 'shop', into: 'crm' }, targetSource: { id: 'my-other', name: 'MariaDB reporting' } });
    expect(JSON.parse(row!.request ?? '{}').targetSource).toEqual({ id: 'my-other', name: 'MariaDB reporting' });

    // Without targetSourceId (or naming the job's own configuration) the job's own server restores, as before.
    for (const body of [good, { ...good, targetSourceId: 'my' }]) {
      const own = await post(body);
      expect(own.status, JSON.stringify(own.body)).toBe(202);
      expect((await waitForEnd(server.url, key, own.body.data.executionId)).status).toBe('Success');
      expect(mysqlRestores.pop()?.server).toBe('own');
    }
  });

  it('refuses a targetSourceId it cannot restore onto, naming the field, and queues nothing', async () => {
    const executions = new ExecutionStore(server.handle.container.resolve(ORM_DATABASE));
    const before = await executions.em().count(ExecutionEntity, {});
    const cases: Array<[unknown, number, string]> = [
      [{ ...good, targetSourceId: 'no-such-source' }, 404, 'targetSourceId "no-such-source" is not a stored source configuration'],
      [{ ...good, targetSourceId: 'disk' }, 404, 'targetSourceId "disk" is not a stored source configuration'],
      [{ ...good, targetSourceId: 'pg' }, 422, 'targetSourceId: source "Cluster" is a pitr-double source'],
      [{ ...good, targetSourceId: 'my-excluded' }, 409, 'targetSourceId: source "MariaDB production 2" is excluded from restores'],
      [{ ...good, targetSourceId: 'my-broken' }, 422, 'targetSourceId: source "MariaDB broken" cannot take a point-in-time restore: [source-mysql-pitr-double] invalid configuration: existing'],
      // Exists on the other server (not on the job's): 409 naming that server; compared without case as on the own.
      [{ ...good, targetDatabase: 'archive', targetSourceId: 'my-other' }, 409, 'targetDatabase "archive" already exists on MariaDB reporting'],
      [{ ...good, targetDatabase: 'reports', targetSourceId: 'my-other' }, 409, 'as "Reports"'],
      [{ ...good, targetSourceId: '' }, 400, 'body.targetSourceId'],
      [{ ...good, targetSourceId: 'x'.repeat(65) }, 400, 'body.targetSourceId'],
      [{ target: { type: 'latest' }, targetPath: join(dir, 'r'), targetSourceId: 'my-other' }, 400, 'body.targetSourceId: targetSourceId is for MySQL/MariaDB jobs'],
    ];
    for (const [body, status, named] of cases) {
      const reply = await post(body, (body as { targetPath?: string }).targetPath ? 'job-pg' : JOB);
      expect(reply.status, JSON.stringify({ body, reply: reply.body })).toBe(status);
      expect(reply.body.error, JSON.stringify(body)).toContain(named);
    }
    expect(mysqlRestores).toEqual([]);
    expect(await executions.em().count(ExecutionEntity, {})).toBe(before);
  });

  it('asks the access policy for storage:restore on the targetSourceId source (403 when refused), nothing queued', async () => {
    // No real identity can be refused here today (storage:restore cannot be scoped to jobs, so only an unscoped grant
    // passes the route, and that covers every source): the identity plugin's policy is wrapped to refuse that one
    // resource, to show the route asks about it and stops.
    const container = server.handle.container;
    const real = container.resolve<AccessPolicy>(TOKENS.AccessPolicy);
    const asked: Array<{ permission: string; type?: string; id?: string }> = [];
    const refusing: AccessPolicy = {
      isAllowed: async (auth, permission, resource) => {
        asked.push({ permission, type: resource?.type, id: resource?.id });
        if (permission === 'storage:restore' && resource?.type === 'source' && resource.id === 'my-other') return false;
        return real.isAllowed(auth, permission, resource);
      },
      visibleIds: (auth, permission, type) => real.visibleIds(auth, permission, type),
    };
    container.register(TOKENS.AccessPolicy, { useValue: refusing });
    try {
      const executions = new ExecutionStore(container.resolve(ORM_DATABASE));
      const before = await executions.em().count(ExecutionEntity, {});
      const refused = await post({ ...good, targetSourceId: 'my-other' });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.error).toBe('targetSourceId "my-other": restoring onto another server needs storage:restore on that source');
      expect(asked).toContainEqual({ permission: 'storage:restore', type: 'source', id: 'my-other' });
      expect(await executions.em().count(ExecutionEntity, {})).toBe(before);
      expect(mysqlRestores).toEqual([]);
    } finally {
      container.register(TOKENS.AccessPolicy, { useValue: real });
    }
  });

  it('refuses the MySQL fields and positions for a PostgreSQL job, and still requires targetPath there', async () => {
    const cases: Array<[unknown, string]> = [
      [{ target: { type: 'latest' }, targetPath: join(dir, 'r'), database: 'shop' }, 'body.database'],
      [{ target: { type: 'latest' }, targetPath: join(dir, 'r'), targetDatabase: 'shop_copy' }, 'body.targetDatabase'],
      [{ target: { type: 'latest' } }, 'body.targetPath'],
      [{ target: { type: 'position', position: 'mysql-bin.000004:120' }, targetPath: join(dir, 'r') }, 'target.position'],
    ];
    for (const [body, named] of cases) {
      const reply = await post(body, 'job-pg');
      expect(reply.status, JSON.stringify({ body, reply: reply.body })).toBe(400);
      expect(reply.body.error).toContain(named);
    }
  });

  it('refuses a test restore of a MySQL point-in-time job whose target is a directory (422), queueing nothing', async () => {
    const reply = await call(server.url, 'POST', `/api/jobs/${JOB}/test-restore`, { key });
    expect(reply.status).toBe(422);
    expect(reply.body.error).toContain('is a MySQL/MariaDB point-in-time job: its test restore rebuilds each database of the base backup in a throwaway database');
    expect(reply.body.error).toContain('so it takes a database target, not directory');
  });
});
