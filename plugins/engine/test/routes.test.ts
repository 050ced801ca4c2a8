// Acceptance 5: every response field of the engine's routes against SPEC.md, plus auth errors, cancellation,
// the Stuck Job Timeout, the SSE feed and the retention preview.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('engine routes (libsql)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeEach(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-routes-'));
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 100 } });
    server.catalog.addConfig({ configId: 'slow', name: 'Slow', kind: 'source', adapterId: 'generated', config: { lines: 100_000, linesPerChunk: 100, delayMsPerChunk: 50 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addJob({ id: 'job', name: 'reports' }, 'src', [{ configId: 'disk', retention: { policyId: 'p1', strategyId: 'gfs', config: { mode: 'keep-last', count: 2 } } }]);
    server.catalog.addJob({ id: 'slow-job', name: 'slow' }, 'slow', [{ configId: 'disk' }]);
    key = await server.apiKey('poller', ['jobs:execute', 'history:read', 'jobs:read']);
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the SPEC representation of GET /api/executions/:id, with logs only when asked', async () => {
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    const plain = await call(server.url, 'GET', `/api/executions/${body.executionId}`, { key });
    expect(plain.status).toBe(200);
    expect(plain.body.success).toBe(true);
    expect(Object.keys(plain.body.data).sort()).toEqual(['duration', 'endedAt', 'error', 'id', 'jobId', 'jobName', 'path', 'progress', 'size', 'stage', 'startedAt', 'status', 'type'].sort());
    expect(plain.body.data).toMatchObject({ id: body.executionId, jobId: 'job', jobName: 'reports', type: 'Backup', status: 'Success', progress: 100, stage: '05-retention', error: null });
    expect(plain.body.data.startedAt).toMatch(ISO);
    expect(plain.body.data.endedAt).toMatch(ISO);
    expect(plain.body.data.duration).toBe(Date.parse(plain.body.data.endedAt) - Date.parse(plain.body.data.startedAt));
    expect(plain.body.data.size).toBeGreaterThan(0);
    expect(plain.body.data.path).toBe(done.path);
    expect(done.logs.length).toBeGreaterThan(5);
    for (const entry of done.logs) {
      expect(Object.keys(entry).sort()).toEqual(['level', 'message', 'stage', 'time']);
      expect(['debug', 'info', 'warn', 'error']).toContain(entry.level);
      expect(entry.time).toMatch(ISO);
    }
    expect(done.logs.map((entry: { stage: string }) => entry.stage)).toEqual(expect.arrayContaining(['01-initialize', '02-dump', '03-upload', '04-completion', '05-retention']));
  });

  it('refuses without credentials (401), without permission (403), and for unknown ids (404)', async () => {
    expect(await call(server.url, 'POST', '/api/jobs/job/run')).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    const readOnly = await server.apiKey('reader', ['history:read']);
    expect(await call(server.url, 'POST', '/api/jobs/job/run', { key: readOnly })).toEqual({ status: 403, body: { error: 'Forbidden' } });
    expect(await call(server.url, 'POST', '/api/jobs/nope/run', { key })).toEqual({ status: 404, body: { error: 'Job not found' } });
    expect((await call(server.url, 'GET', '/api/executions/nope', { key })).status).toBe(404);
    expect((await call(server.url, 'POST', '/api/jobs/job/run', { key, json: { lock: 'yes' } })).status).toBe(400);
  });

  it('shows a live duration and null endedAt while running, then cancels to Cancelled leaving no object', async () => {
    const { body } = await call(server.url, 'POST', '/api/jobs/slow-job/run', { key });
    let running;
    for (;;) {
      running = (await call(server.url, 'GET', `/api/executions/${body.executionId}`, { key })).body.data;
      if (running.status === 'Running' && running.stage === '03-upload') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(running.endedAt).toBeNull();
    expect(running.size).toBeNull();
    const later = (await call(server.url, 'GET', `/api/executions/${body.executionId}`, { key })).body.data;
    expect(later.duration).toBeGreaterThanOrEqual(running.duration);
    const cancel = await call(server.url, 'POST', `/api/executions/${body.executionId}/cancel`, { key });
    expect(cancel).toEqual({ status: 200, body: { success: true, status: 'Cancelled', message: 'Execution cancelled' } });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Cancelled');
    expect(await readdir(dir)).toEqual([]);
    expect((await call(server.url, 'POST', `/api/executions/${body.executionId}/cancel`, { key })).status).toBe(409);
  });

  it('cancels a Pending execution directly', async () => {
    const first = await call(server.url, 'POST', '/api/jobs/slow-job/run', { key });
    const second = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const cancel = await call(server.url, 'POST', `/api/executions/${second.body.executionId}/cancel`, { key });
    expect(cancel.body.status).toBe('Cancelled');
    const view = (await call(server.url, 'GET', `/api/executions/${second.body.executionId}`, { key })).body.data;
    expect(view.status).toBe('Cancelled');
    expect(view.endedAt).toMatch(ISO);
    await call(server.url, 'POST', `/api/executions/${first.body.executionId}/cancel`, { key });
  });

  it('cancels a run that makes no progress within the Stuck Job Timeout', async () => {
    server.settings.values.set('stuckJobTimeoutMinutes', 0.005); // 300 ms
    server.catalog.addConfig({ configId: 'stalled', name: 'Stalled', kind: 'source', adapterId: 'generated', config: { lines: 10, linesPerChunk: 1, delayMsPerChunk: 10_000 } });
    server.catalog.addJob({ id: 'stalled-job', name: 'stalled' }, 'stalled', [{ configId: 'disk' }]);
    const { body } = await call(server.url, 'POST', '/api/jobs/stalled-job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Cancelled');
    expect(done.logs.some((entry: { message: string }) => entry.message.includes('Stuck Job Timeout'))).toBe(true);
  });

  it('streams progress, log lines and the final status as server-sent events', async () => {
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const response = await fetch(`${server.url}/api/executions/${body.executionId}/events`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean).map((frame) => ({ event: /^event: (.*)$/m.exec(frame)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) }));
    expect(events.some((e) => e.event === 'log' && typeof e.data.message === 'string')).toBe(true);
    expect(events.some((e) => e.event === 'progress' && typeof e.data.progress === 'number')).toBe(true);
    // Live bytes for clients' progress bars (issue 15): every progress event says how many bytes went through.
    expect(events.filter((e) => e.event === 'progress').every((e) => 'bytesProcessed' in e.data)).toBe(true);
    expect(events.at(-1)).toEqual({ event: 'status', data: { status: 'Success', error: null, endedAt: expect.stringMatching(ISO) } });
  });

  it('applies retention after each run, keeps locked backups, and previews the same decision', async () => {
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key, json: { lock: i === 0 } });
      paths.push((await waitForEnd(server.url, key, body.executionId)).path);
    }
    // A foreign file without a sidecar is never touched by retention.
    await writeFile(join(dir, 'someone-elses.txt'), 'not ours');
    const files = (await readdir(dir)).sort();
    // keep-last 2: the locked first backup stays besides the two newest.
    expect(files).toEqual([...paths.flatMap((p) => [p, `${p}.meta.json`]), 'someone-elses.txt'].sort());
    const fourth = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, fourth.body.executionId);
    expect(done.logs.some((entry: { message: string }) => entry.message.startsWith(`retention on Disk: deleted ${paths[1]}`))).toBe(true);
    const preview = await call(server.url, 'GET', '/api/jobs/job/retention-preview', { key });
    expect(preview.status).toBe(200);
    const [destination] = preview.body.data;
    expect(destination).toMatchObject({ configId: 'disk', name: 'Disk', policyId: 'p1', error: null });
    const byKey = Object.fromEntries(destination.backups.map((b: { key: string }) => [b.key, b]));
    expect(Object.keys(byKey).sort()).toEqual([paths[0], paths[2], done.path].sort());
    expect(byKey[paths[0]!]).toMatchObject({ locked: true, action: 'keep' });
    expect(destination.backups.every((b: { action: string; reason: string }) => b.action === 'keep' && b.reason.length > 0)).toBe(true);
    // No object lock on a disk destination: no retain-until date, the policy's verdicts unchanged.
    expect(destination.backups.map((b: { retainUntil: unknown }) => b.retainUntil)).toEqual([null, null, null]);
  });
});
