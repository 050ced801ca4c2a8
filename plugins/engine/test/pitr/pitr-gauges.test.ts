// The point-in-time gauges' port (TOKENS.PointInTimeStats, read by observability's /metrics) and the slot lag alert,
// with the test double source streaming into a real server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS, type HoldfastEvents } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAG_ALERT_SETTING } from '../../src/pitr/pitr-gauges-lag.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { nextBase, scriptedLog, scriptedLogs } from './pitr-doubles.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const seg = (n: number) => `00000001000000000000000${n}`;

describe.each(['sqlite', 'postgresql'] as const)('point-in-time gauges and the lag alert (test double source, %s)', (dialect) => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let dir: string;
  let key: string;
  const lagEvents: Array<HoldfastEvents['pitr_lag']> = [];

  beforeAll(async () => {
    scriptedLogs.clear();
    target = await createTarget(dialect);
    server = await startPitrServer(target);
    server.settings.values.set(LAG_ALERT_SETTING, 10_000);
    server.handle.container.resolve(TOKENS.EventBus).on('pitr_lag', (event) => void lagEvents.push(event));
    dir = await mkdtemp(join(tmpdir(), 'hf-pitr-gauges-'));
    server.catalog.addConfig({ configId: 'pg', name: 'Cluster', kind: 'source', adapterId: 'pitr-double', config: {} });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addJob({ id: 'job-gauged', name: 'gauged' }, 'pg', [{ configId: 'disk' }]);
    key = await server.apiKey('runner', ['history:read', 'jobs:execute']);
  });

  afterAll(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers window, recovery point, segments, bytes and the last slot lag of each job', async () => {
    const stats = server.handle.container.resolve(TOKENS.PointInTimeStats);
    const log = scriptedLog('job-gauged');
    await until('the stream to open', () => log.opens.length === 1);
    // Streaming but nothing archived, no lag reported yet: the job is listed with empty figures.
    expect(await stats.archives()).toEqual([{ jobId: 'job-gauged', jobName: 'gauged', windowStart: null, windowEnd: null, recoveryPointSeconds: null, segments: 0, storedBytes: 0, slotLagBytes: null }]);

    nextBase.info = {
      logKind: 'postgres-wal',
      startPosition: '0/3000028',
      stopPosition: '0/3000100',
      startSegment: seg(3),
      timeline: 1,
      systemId: '7300000000000000001',
      serverVersion: '15.8',
      startedAt: new Date(Date.now() - 60_000),
      consistentAt: new Date(Date.now() - 50_000),
    };
    const run = await call(server.url, 'POST', '/api/jobs/job-gauged/run', { key });
    expect((await waitForEnd(server.url, key, run.body.executionId)).status).toBe('Success');
    const end = new Date(Date.now() - 20_000);
    await log.emit({ name: seg(3), bytes: Buffer.alloc(4096, 1), coversUntil: new Date(Date.now() - 40_000) });
    await log.emit({ name: seg(4), bytes: Buffer.alloc(1024, 2), partial: true, coversUntil: end });
    await until('two pieces archived', () => log.archived.length === 2);
    log.notice({ type: 'lag', bytes: 4321 });
    await until('the lag stored', async () => (await stats.archives())[0]?.slotLagBytes === 4321);

    const [figures] = await stats.archives();
    const pieces = await server.changeLogs.piecesOf('job-gauged');
    expect(figures).toMatchObject({ jobId: 'job-gauged', jobName: 'gauged', windowStart: nextBase.info.consistentAt, windowEnd: end, segments: 2, storedBytes: pieces.reduce((sum, p) => sum + p.storedSize, 0) });
    expect(figures!.storedBytes).toBeGreaterThan(0);
    expect(Math.abs(figures!.recoveryPointSeconds! - (Date.now() - end.getTime()) / 1000)).toBeLessThan(5);
  });

  it('raises pitr_lag once when the lag passes the threshold, again only after it fell back below 80 %', async () => {
    const log = scriptedLog('job-gauged');
    log.notice({ type: 'lag', bytes: 12_000 });
    await until('a lag event', () => lagEvents.length === 1);
    expect(lagEvents[0]).toMatchObject({ jobId: 'job-gauged', jobName: 'gauged', bytes: 12_000, thresholdBytes: 10_000 });
    expect(lagEvents[0]!.message).toMatch(/holds 12000 bytes of WAL/);
    log.notice({ type: 'lag', bytes: 15_000 });
    log.notice({ type: 'lag', bytes: 9_000 });
    await until('the lag of 9000 stored', async () => (await server.changeLogs.streamFacts()).find((fact) => fact.jobId === 'job-gauged')?.lagBytes === 9_000);
    expect(lagEvents).toHaveLength(1);
    log.notice({ type: 'lag', bytes: 7_000 });
    await until('the lag of 7000 stored', async () => (await server.changeLogs.streamFacts()).find((fact) => fact.jobId === 'job-gauged')?.lagBytes === 7_000);
    log.notice({ type: 'lag', bytes: 11_000 });
    await until('a second lag event', () => lagEvents.length === 2);
    expect(lagEvents[1]).toMatchObject({ bytes: 11_000 });
  });
});
