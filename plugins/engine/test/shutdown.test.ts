// Shutdown: stop claiming, wait for the grace period (shortened here from 5 minutes), then cancel what still runs,
// saying why. The rows are final before the database closes, so a restart finds nothing to call "interrupted".
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryJobCatalog } from './support/doubles.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe('shutdown grace (libsql)', () => {
  let target: TestDatabaseTarget | undefined;
  let server: EngineServer | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('cancels a run still going when the grace period ends, and never claims the queued one', async () => {
    target = await createTarget('sqlite');
    dir = await mkdtemp(join(tmpdir(), 'hf-shutdown-'));
    const catalog = new InMemoryJobCatalog();
    catalog.addConfig({ configId: 'slow', name: 'Slow', kind: 'source', adapterId: 'generated', config: { lines: 100_000, linesPerChunk: 100, delayMsPerChunk: 50 } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    catalog.addJob({ id: 'slow-job', name: 'slow' }, 'slow', [{ configId: 'disk' }]);
    const first = await startEngineServer(target, { catalog, timings: { shutdownGraceMs: 400 } });
    const key = await first.apiKey('ops', ['jobs:execute', 'history:read']);
    const running = await call(first.url, 'POST', '/api/jobs/slow-job/run', { key });
    const queued = await call(first.url, 'POST', '/api/jobs/slow-job/run', { key });
    while ((await call(first.url, 'GET', `/api/executions/${running.body.executionId}`, { key })).body.data.stage !== '03-upload') {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const started = Date.now();
    await first.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    // The aborted put left nothing, not even its temp file.
    expect(await readdir(dir)).toEqual([]);

    const restartedAt = Date.now();
    server = await startEngineServer(target, { catalog, timings: { pollIntervalMs: 60_000 } });
    const cancelled = await waitForEnd(server.url, key, running.body.executionId);
    expect(cancelled.status).toBe('Cancelled');
    expect(cancelled.logs.some((entry: { message: string }) => entry.message.includes('the server shut down and the grace period ran out'))).toBe(true);
    // The second one was never claimed by the stopping server: the restarted one starts it.
    const next = (await call(server.url, 'GET', `/api/executions/${queued.body.executionId}`, { key })).body.data;
    expect(Date.parse(next.startedAt)).toBeGreaterThanOrEqual(restartedAt - 5);
    await call(server.url, 'POST', `/api/executions/${queued.body.executionId}/cancel`, { key });
  });
});
