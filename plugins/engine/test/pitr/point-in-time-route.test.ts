import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { nextBase, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const seg = (n: number) => `00000001000000000000000${n}`;

describe.each(['sqlite', 'postgresql'] as const)('GET /api/jobs/:id/point-in-time (test double source, %s)', (dialect) => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    scriptedLogs.clear();
    target = await createTarget(dialect);
    server = await startPitrServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-pitr-route-'));
    server.catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    server.catalog.addConfig({ configId: 'logical', name: 'Logical', kind: 'source', adapterId: 'pitr-double', config: { pointInTime: false } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addJob({ id: 'job-pitr', name: 'cluster' }, 'pg', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'job-logical', name: 'logical' }, 'logical', [{ configId: 'disk' }]);
    key = await server.apiKey('reader', ['history:read', 'jobs:execute']);
  });

  afterAll(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('records the base backup in its sidecar and answers the window from it and the archived log', async () => {
    const log = scriptedLog('job-pitr');
    await until('the stream to open', () => log.opens.length === 1);
    const before = await call(server.url, 'GET', '/api/jobs/job-pitr/point-in-time', { key });
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({ enabled: true, logKind: 'postgres-wal', window: null, gaps: [], segments: 0, storedBytes: 0, recoveryPointSeconds: null });
    expect(before.body.data.streaming).toMatchObject({ state: 'streaming', process: { id: server.engine().processId, pid: process.pid } });

    nextBase.info = {
      logKind: 'postgres-wal',
      startPosition: '0/3000028',
      stopPosition: '0/3000100',
      startSegment: seg(3),
      timeline: 1,
      systemId: '7300000000000000001',
      serverVersion: '15.8',
      startedAt: new Date('2026-12-06T02:59:50Z'),
      consistentAt: new Date('2026-12-06T03:00:00Z'),
    };
    const run = await call(server.url, 'POST', '/api/jobs/job-pitr/run', { key });
    expect(run.status).toBe(200);
    const done = await waitForEnd(server.url, key, run.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    const sidecar = JSON.parse(await readFile(join(dir, `${done.path}.meta.json`), 'utf8'));
    expect(sidecar.pointInTime).toEqual({
      logKind: 'postgres-wal',
      startPosition: '0/3000028',
      stopPosition: '0/3000100',
      startSegment: seg(3),
      timeline: 1,
      systemId: '7300000000000000001',
      serverVersion: '15.8',
      startedAt: '2026-12-06T02:59:50.000Z',
      consistentAt: '2026-12-06T03:00:00.000Z',
    });

    await log.emit({ name: seg(3), bytes: Buffer.alloc(4096, 1), coversUntil: new Date('2026-12-06T03:00:05Z') });
    await log.emit({ name: seg(4), bytes: Buffer.alloc(4096, 2), coversUntil: new Date('2026-12-06T03:00:10Z') });
    // Segment 5 is lost; 6 arrives, then a partial of 7.
    await log.emit({ name: seg(6), bytes: Buffer.alloc(4096, 3), coversUntil: new Date('2026-12-06T03:00:20Z') });
    await log.emit({ name: seg(7), bytes: Buffer.alloc(1024, 4), partial: true, coversUntil: new Date('2026-12-06T03:00:25Z') });
    await until('four pieces archived', () => log.archived.length === 4);

    const gap = await call(server.url, 'GET', '/api/jobs/job-pitr/point-in-time', { key });
    expect(gap.status).toBe(200);
    expect(gap.body.data.gaps).toEqual([{ after: seg(4), next: seg(6), missing: 1 }]);
    // The only base lies before the gap: nothing restores to an instant after it.
    expect(gap.body.data.window).toBeNull();
    expect(gap.body.data.segments).toBe(4);
    const stored = await server.changeLogs.piecesOf('job-pitr');
    expect(gap.body.data.storedBytes).toBe(stored.reduce((sum, piece) => sum + piece.storedSize, 0));

    // A new base backup after the gap opens a window from its consistent instant to the newest partial.
    nextBase.info = { ...nextBase.info, startPosition: '0/6000028', stopPosition: '0/6000100', startSegment: seg(6), startedAt: new Date('2026-12-06T03:00:14Z'), consistentAt: new Date('2026-12-06T03:00:15Z') };
    const second = await call(server.url, 'POST', '/api/jobs/job-pitr/run', { key });
    const secondDone = await waitForEnd(server.url, key, second.body.executionId);
    expect(secondDone.status, JSON.stringify(secondDone.logs)).toBe('Success');
    const after = await call(server.url, 'GET', '/api/jobs/job-pitr/point-in-time', { key });
    expect(after.body.data.window).toEqual({ start: '2026-12-06T03:00:15.000Z', end: '2026-12-06T03:00:25.000Z', baseExecutionId: secondDone.id, timeline: 1 });
    const age = (Date.now() - Date.parse('2026-12-06T03:00:25Z')) / 1000;
    expect(Math.abs(after.body.data.recoveryPointSeconds - age)).toBeLessThan(5);

    // The overview for the dashboard answers the same window and archive for this job.
    const overview = await call(server.url, 'GET', '/api/point-in-time', { key });
    expect(overview.status).toBe(200);
    const entry = overview.body.data.find((candidate: { jobId: string }) => candidate.jobId === 'job-pitr');
    expect(entry).toMatchObject({ jobName: 'cluster', windowStart: '2026-12-06T03:00:15.000Z', windowEnd: '2026-12-06T03:00:25.000Z', segments: 4, storedBytes: after.body.data.storedBytes });
    expect(Math.abs(entry.recoveryPointSeconds - age)).toBeLessThan(5);
    expect(overview.body.data.some((candidate: { jobId: string }) => candidate.jobId === 'job-logical')).toBe(false);
  });

  it('a base backup retention deleted from its only destination no longer counts', async () => {
    server.catalog.addJob({ id: 'job-retained', name: 'retained' }, 'pg', [{ configId: 'disk', retention: { policyId: 'p1', strategyId: 'gfs', config: { mode: 'keep-last', count: 1 } } }]);
    nextBase.info = { ...nextBase.info!, startSegment: seg(3) };
    const runs = [];
    for (let index = 0; index < 2; index++) {
      const run = await call(server.url, 'POST', '/api/jobs/job-retained/run', { key });
      const done = await waitForEnd(server.url, key, run.body.executionId);
      expect(done.status, JSON.stringify(done.logs)).toBe('Success');
      runs.push(done);
    }
    const bases = await server.changeLogs.basesOf('job-retained');
    expect(bases.map((base) => [base.executionId, base.storageKey, base.destinations])).toEqual([[runs[1].id, runs[1].path, ['disk']]]);
  });

  it('answers { enabled: false } for a job whose source is not set up for point-in-time recovery', async () => {
    const reply = await call(server.url, 'GET', '/api/jobs/job-logical/point-in-time', { key });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: true, data: { enabled: false } });
  });

  it('404 for an unknown job, 401 without credentials, 403 without history:read', async () => {
    expect((await call(server.url, 'GET', '/api/jobs/no-such-job/point-in-time', { key })).status).toBe(404);
    expect((await call(server.url, 'GET', '/api/jobs/job-pitr/point-in-time')).status).toBe(401);
    const outsider = await server.apiKey('outsider', ['jobs:execute']);
    expect((await call(server.url, 'GET', '/api/jobs/job-pitr/point-in-time', { key: outsider })).status).toBe(403);
    expect((await call(server.url, 'GET', '/api/point-in-time')).status).toBe(401);
    expect((await call(server.url, 'GET', '/api/point-in-time', { key: outsider })).status).toBe(403);
  });
});
