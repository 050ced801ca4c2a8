// Issue 18 (scale-out): several engines on one PostgreSQL split maxConcurrentJobs between the live workers, wake each
// other through NOTIFY (the poll here is a minute, so only a notification can start a run quickly), an `api`
// process queues but never claims, and every engine registers itself in engine_processes.
import { ORM_DATABASE } from '@holdfast/orm-port';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExecutionStore } from '../src/store/execution-store.js';
import { InMemoryJobCatalog, MapSettings } from './support/doubles.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe('engines sharing one PostgreSQL', () => {
  let target: TestDatabaseTarget | undefined;
  let dir: string | undefined;
  const servers: EngineServer[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('split 4 slots 2 + 2 between two workers, start runs queued through an api process at once, and never run one there', async () => {
    target = await createTarget('postgresql');
    dir = await mkdtemp(join(tmpdir(), 'hf-share-'));
    const catalog = new InMemoryJobCatalog();
    const settings = new MapSettings();
    settings.values.set('maxConcurrentJobs', 4);
    catalog.addConfig({ configId: 'slow', name: 'Slow source', kind: 'source', adapterId: 'generated', config: { lines: 1500, linesPerChunk: 100, delayMsPerChunk: 50 } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    catalog.addJob({ id: 'job', name: 'queued', namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss' }, 'slow', [{ configId: 'disk' }]);
    const timings = { pollIntervalMs: 60_000 };
    for (const role of ['all', 'worker', 'api'] as const) servers.push(await startEngineServer(target, { catalog, settings, timings: { ...timings, role } }));
    const [all, worker, api] = servers as [EngineServer, EngineServer, EngineServer];
    const knex = all.handle.container.resolve(ORM_DATABASE).em().getKnex();

    const registered: Array<{ id: string; role: string }> = await knex('engine_processes').select('id', 'role').orderBy('role');
    expect(registered).toEqual([
      { id: all.engine().processId, role: 'all' },
      { id: api.engine().processId, role: 'api' },
      { id: worker.engine().processId, role: 'worker' },
    ]);

    let sampling = true;
    const perProcess: Array<Record<string, number>> = [];
    const sampler = (async () => {
      while (sampling) {
        const rows: Array<{ claimed_by: string; n: number }> = await knex('executions').select('claimed_by').count<{ claimed_by: string; n: number }[]>({ n: '*' }).where({ status: 'Running' }).groupBy('claimed_by');
        perProcess.push(Object.fromEntries(rows.map((row) => [row.claimed_by, Number(row.n)])));
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const key = await api.apiKey('ci', ['jobs:execute', 'history:read']);
    const queuedAt = Date.now();
    // Queued all at once and each run lasting about 0.75 s, so all four slots fill even on a loaded machine (queued one
    // by one on a slow CI, early runs could end before the fourth was queued and the peak stayed at 3).
    const queued = await Promise.all(Array.from({ length: 8 }, () => call(api.url, 'POST', '/api/jobs/job/run', { key })));
    const ids: string[] = queued.map((response) => response.body.executionId);
    const ended = [];
    for (const id of ids) ended.push(await waitForEnd(api.url, key, id));
    sampling = false;
    await sampler;

    expect(ended.map((e) => e.status)).toEqual(Array(8).fill('Success'));
    // Claimed within seconds of being queued while the poll is a minute away: the NOTIFY woke a worker. (Typically
    // well under a second; the bound leaves room for eight parallel requests on a loaded 2-core machine.)
    expect(Math.min(...ended.map((e) => Date.parse(e.startedAt))) - queuedAt).toBeLessThan(10_000);
    const rows: Array<{ claimed_by: string }> = await knex('executions').select('claimed_by').whereIn('id', ids);
    expect(new Set(rows.map((row) => row.claimed_by))).toEqual(new Set([all.engine().processId, worker.engine().processId]));
    const peak = (id: string) => Math.max(...perProcess.map((sample) => sample[id] ?? 0));
    expect([peak(all.engine().processId), peak(worker.engine().processId), peak(api.engine().processId)]).toEqual([2, 2, 0]);
    expect(Math.max(...perProcess.map((sample) => Object.values(sample).reduce((sum, n) => sum + n, 0)))).toBe(4);

    // A stopped engine removes its row.
    await servers.pop()!.close();
    expect((await knex('engine_processes').select('role').orderBy('role')).map((row: { role: string }) => row.role)).toEqual(['all', 'worker']);
  });
});

describe('claims on a shared PostgreSQL', () => {
  let target: TestDatabaseTarget | undefined;
  let dir: string | undefined;
  const servers: EngineServer[] = [];

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const server of servers.splice(0)) await server.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // At 10,000 jobs every finished run woke every worker, and each opened a claim transaction (advisory lock, two reads,
  // commit) to find the queue empty: five statements per worker per run for nothing (issue 18, docs/operations/scaling.md).
  it('a run that ends with an empty queue wakes no claim anywhere, and a queued run costs at most one empty claim', async () => {
    target = await createTarget('postgresql');
    dir = await mkdtemp(join(tmpdir(), 'hf-claims-'));
    const catalog = new InMemoryJobCatalog();
    const settings = new MapSettings();
    settings.values.set('maxConcurrentJobs', 4);
    catalog.addConfig({ configId: 'tiny', name: 'Tiny source', kind: 'source', adapterId: 'generated', config: { lines: 10, linesPerChunk: 10, delayMsPerChunk: 0 } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    catalog.addJob({ id: 'job', name: 'tiny', namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss' }, 'tiny', [{ configId: 'disk' }]);
    for (const role of ['all', 'worker'] as const) servers.push(await startEngineServer(target, { catalog, settings, timings: { pollIntervalMs: 60_000, role } }));
    const [all] = servers as [EngineServer, EngineServer];
    const claims = vi.spyOn(ExecutionStore.prototype, 'claim');
    const key = await all.apiKey('ci', ['jobs:execute', 'history:read']);

    const { executionId } = (await call(all.url, 'POST', '/api/jobs/job/run', { key })).body;
    expect((await waitForEnd(all.url, key, executionId)).status).toBe('Success');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const results = await Promise.all(claims.mock.results.map((result) => result.value as Promise<unknown[]>));
    expect(results.filter((rows) => rows.length > 0)).toEqual([[expect.objectContaining({ id: executionId })]]);
    // Both workers may see the one waiting run at the same moment; one of them then claims nothing.
    expect(results.filter((rows) => rows.length === 0).length).toBeLessThanOrEqual(1);
    const afterEnd = claims.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(claims.mock.calls.length).toBe(afterEnd);
  });
});

describe('claiming a burst on PostgreSQL', () => {
  let target: TestDatabaseTarget | undefined;
  const servers: EngineServer[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await target?.drop();
  });

  // 167 runs due in one cron minute were claimed one transaction each, serialised across processes by the claim lock:
  // the tail of the 10,000-job delay (issue 18). One transaction now takes as many as the slots and the share allow.
  it('takes the oldest Pending runs in one transaction, as many as the slots and the share allow, in queue order', async () => {
    target = await createTarget('postgresql');
    const catalog = new InMemoryJobCatalog();
    catalog.addConfig({ configId: 'tiny', name: 'Tiny source', kind: 'source', adapterId: 'generated', config: { lines: 10, linesPerChunk: 10, delayMsPerChunk: 0 } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: tmpdir() } });
    catalog.addJob({ id: 'job', name: 'tiny', namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss' }, 'tiny', [{ configId: 'disk' }]);
    // Only an api process: nothing claims but this test.
    servers.push(await startEngineServer(target, { catalog, settings: new MapSettings(), timings: { pollIntervalMs: 60_000, role: 'api' } }));
    const [api] = servers as [EngineServer];
    const key = await api.apiKey('ci', ['jobs:execute']);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await call(api.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    const store = new ExecutionStore(api.handle.container.resolve(ORM_DATABASE));
    const statements: string[] = [];
    const knex = api.handle.container.resolve(ORM_DATABASE).em().getKnex();
    const onQuery = (query: { sql: string }) => statements.push(query.sql);
    knex.on('query', onQuery);
    const first = await store.claim('proc-a', 5, 3, 32);
    knex.off('query', onQuery);
    expect(first.map((execution) => execution.id)).toEqual(ids.slice(0, 3));
    expect(first.every((execution) => execution.status === 'Running')).toBe(true);
    // One transaction: begin, lock, count, one pick-and-mark update, commit; then one read of the claimed rows.
    expect(statements.filter((sql) => /\bUPDATE executions\b/i.test(sql))).toHaveLength(1);
    expect(await store.claim('proc-a', 5, 3, 32)).toEqual([]);
    // Another process: the slots (5) leave room for two, and the limit for one.
    expect((await store.claim('proc-b', 5, 3, 1)).map((execution) => execution.id)).toEqual([ids[3]]);
    expect((await store.claim('proc-b', 5, 3, 32)).map((execution) => execution.id)).toEqual([ids[4]]);
    expect(await store.claim('proc-b', 5, 3, 32)).toEqual([]);
    const rows: Array<{ id: string; status: string; claimed_by: string | null }> = await knex('executions').select('id', 'status', 'claimed_by').whereIn('id', ids);
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(ids.map((id) => [byId.get(id)!.status, byId.get(id)!.claimed_by])).toEqual([
      ['Running', 'proc-a'],
      ['Running', 'proc-a'],
      ['Running', 'proc-a'],
      ['Running', 'proc-b'],
      ['Running', 'proc-b'],
      ['Pending', null],
    ]);
  });
});

describe('HOLDFAST_ROLE', () => {
  it('defaults to all, takes api and worker, and names the variable for anything else', async () => {
    const { processRoleFrom, runsJobs, engineOptionsFrom } = await import('../src/index.js');
    expect(processRoleFrom({})).toBe('all');
    expect(processRoleFrom({ HOLDFAST_ROLE: ' Worker ' })).toBe('worker');
    expect(engineOptionsFrom({ HOLDFAST_ROLE: 'api' }).role).toBe('api');
    expect([runsJobs('all'), runsJobs('worker'), runsJobs('api')]).toEqual([true, true, false]);
    expect(() => processRoleFrom({ HOLDFAST_ROLE: 'boss' })).toThrow('HOLDFAST_ROLE must be one of all, api, worker (got "boss")');
  });
});
