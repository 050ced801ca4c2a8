// Acceptance 4: partial and total destination failures, and a source that cannot connect.
// `storage-flaky` and `storage-undeletable` are TEST-ONLY adapters (support/test-adapters.ts).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';
import { undeletableObjects } from './support/test-adapters.js';

describe('failing destinations and sources (libsql)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeEach(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-dest-'));
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 200_000, linesPerChunk: 2000 } });
    server.catalog.addConfig({ configId: 'good', name: 'Good disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addConfig({ configId: 'full', name: 'Full disk', kind: 'storage', adapterId: 'flaky', config: { failAfterBytes: 100_000 } });
    server.catalog.addConfig({ configId: 'full-2', name: 'Other full disk', kind: 'storage', adapterId: 'flaky', config: { failAfterBytes: 50_000 } });
    key = await server.apiKey('ops', ['jobs:execute', 'history:read']);
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends Partial when one destination refuses writes mid-run, with its error logged, and the other completes', async () => {
    server.catalog.addJob({ id: 'job', name: 'mixed' }, 'src', [{ configId: 'full' }, { configId: 'good', priority: 1 }]);
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Partial');
    expect(done.error).toMatch(/Full disk failed: .*write refused after 100000 bytes/);
    expect(done.logs.some((entry: { level: string; message: string }) => entry.level === 'error' && entry.message.includes('Full disk'))).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([done.path, `${done.path}.meta.json`]);
    expect(done.size).toBeGreaterThan(100_000);
  });

  it('ends Partial, never Failed, when retention cannot delete after a good upload, and logs each failed deletion', async () => {
    undeletableObjects.clear();
    server.catalog.addConfig({ configId: 'locked', name: 'Object-lock bucket', kind: 'storage', adapterId: 'undeletable', config: {} });
    server.catalog.addConfig({ configId: 'small', name: 'Small', kind: 'source', adapterId: 'generated', config: { lines: 50 } });
    const keepOne = { policyId: 'p1', strategyId: 'gfs', config: { mode: 'keep-last', count: 1 } };
    server.catalog.addJob({ id: 'job', name: 'locked' }, 'small', [{ configId: 'locked', retention: keepOne }]);
    const first = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect(first.status).toBe('Success');
    const second = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect(second.status).toBe('Partial');
    expect(second.error).toMatch(/could not delete .*not permitted/);
    expect(second.logs.some((entry: { level: string; stage: string; message: string }) => entry.stage === '05-retention' && entry.level === 'error' && entry.message.includes(first.path))).toBe(true);
    // Nothing was lost: both backups and their sidecars are still there.
    expect([...undeletableObjects.keys()].sort()).toEqual([first.path, `${first.path}.meta.json`, second.path, `${second.path}.meta.json`].sort());
  });

  it('ends Failed when every destination fails, leaving nothing behind', async () => {
    server.catalog.addJob({ id: 'job', name: 'doomed' }, 'src', [{ configId: 'full' }, { configId: 'full-2' }]);
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Failed');
    expect(done.error).toMatch(/every destination failed|failed/);
    expect(done.size).toBeNull();
  });

  it('ends Failed with the cause named when PostgreSQL refuses the login, and uploads nothing', async () => {
    server.catalog.addConfig({ configId: 'pg', name: 'Wrong role', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'no_such_role_hf' } });
    server.catalog.addJob({ id: 'job', name: 'bad-login', databases: ['postgres'] }, 'pg', [{ configId: 'good' }]);
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Failed');
    expect(done.error).toMatch(/no_such_role_hf/);
    expect(done.error).toMatch(/dump could not start/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('ends Partial when the dump reports warnings', async () => {
    server.catalog.addConfig({ configId: 'warn', name: 'Warning source', kind: 'source', adapterId: 'generated', config: { lines: 10, warnings: ['file /x unreadable'] } });
    server.catalog.addJob({ id: 'job', name: 'warned' }, 'warn', [{ configId: 'good' }]);
    const { body } = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, body.executionId);
    expect(done.status).toBe('Partial');
    expect(done.logs.some((entry: { level: string; message: string }) => entry.level === 'warn' && entry.message.includes('file /x unreadable'))).toBe(true);
  });
});
