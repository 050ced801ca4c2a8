// Acceptance 2: FIFO, the concurrency limit across processes, and no execution claimed twice.
import { ORM_DATABASE } from '@holdfast/orm-port';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../src/index.js';
import { InMemoryJobCatalog, MapSettings } from './support/doubles.js';
import { call, createTarget, startEngineServer, waitForEnd, type Dialect, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

interface Setup {
  target: TestDatabaseTarget;
  servers: EngineServer[];
  dir: string;
}

async function setUp(dialect: Dialect, serverCount: number): Promise<Setup & { catalog: InMemoryJobCatalog; settings: MapSettings }> {
  const target = await createTarget(dialect);
  const dir = await mkdtemp(join(tmpdir(), 'hf-queue-'));
  const catalog = new InMemoryJobCatalog();
  const settings = new MapSettings();
  settings.values.set('maxConcurrentJobs', 2);
  catalog.addConfig({ configId: 'slow', name: 'Slow source', kind: 'source', adapterId: 'generated', config: { lines: 1500, linesPerChunk: 100, delayMsPerChunk: 10 } });
  catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
  catalog.addJob({ id: 'job', name: 'queued', namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss' }, 'slow', [{ configId: 'disk' }]);
  const servers: EngineServer[] = [];
  // Servers start one after another: the first migrates, the others find the schema up to date.
  for (let i = 0; i < serverCount; i++) servers.push(await startEngineServer(target, { catalog, settings }));
  return { target, servers, dir, catalog, settings };
}

describe.each(['sqlite', 'postgresql'] as const)('queue on %s', (dialect) => {
  let setup: Setup | undefined;

  afterEach(async () => {
    for (const server of setup?.servers ?? []) await server.close();
    await setup?.target.drop();
    if (setup) await rm(setup.dir, { recursive: true, force: true });
    setup = undefined;
  });

  it('runs 20 triggers FIFO with never more than maxConcurrentJobs = 2 running', async () => {
    setup = await setUp(dialect, 1);
    const [server] = setup.servers;
    const key = await server!.apiKey('ci', ['jobs:execute', 'history:read']);
    const store = new ExecutionStore(server!.handle.container.resolve(ORM_DATABASE));
    let maxSeen = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxSeen = Math.max(maxSeen, await store.countRunning());
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await call(server!.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    const ended = [];
    for (const id of ids) ended.push(await waitForEnd(server!.url, key, id));
    sampling = false;
    await sampler;
    expect(ended.map((e) => e.status)).toEqual(Array(20).fill('Success'));
    expect(maxSeen).toBe(2);
    const starts = ended.map((e) => Date.parse(e.startedAt));
    for (let i = 1; i < starts.length; i++) expect(starts[i]).toBeGreaterThanOrEqual(starts[i - 1]!);
    // Every name is distinct: same-second runs got a suffix instead of overwriting each other.
    expect(new Set(ended.map((e) => e.path)).size).toBe(20);
  });

  if (dialect === 'postgresql') {
    it('never claims an execution twice with two server processes on one database', async () => {
      setup = await setUp(dialect, 2);
      const [first, second] = setup.servers;
      const key = await first!.apiKey('ci', ['jobs:execute', 'history:read']);
      const starts = new Map<string, number>();
      for (const server of setup.servers) {
        server.handle.container.resolve(TOKENS.EventBus).on('backup_success', ({ executionId }) => {
          starts.set(executionId, (starts.get(executionId) ?? 0) + 1);
        });
      }
      const store = new ExecutionStore(first!.handle.container.resolve(ORM_DATABASE));
      let maxSeen = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          maxSeen = Math.max(maxSeen, await store.countRunning());
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
      })();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const server = i % 2 === 0 ? first! : second!;
        ids.push((await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
      }
      const ended = [];
      for (const id of ids) ended.push(await waitForEnd(first!.url, key, id));
      sampling = false;
      await sampler;
      expect(ended.map((e) => e.status)).toEqual(Array(12).fill('Success'));
      expect(maxSeen).toBeLessThanOrEqual(2);
      // Same job, same second, two processes: the locked pick gives every run its own file name.
      expect(new Set(ended.map((e) => e.path)).size).toBe(12);
      expect([...starts.values()]).toEqual(Array(12).fill(1));
      for (const done of ended) {
        expect(done.logs.filter((entry: { message: string }) => entry.message.startsWith('Backup run started'))).toHaveLength(1);
      }
      // Which process wins each claim depends on timing (on a loaded machine one may win them all), so the test
      // asserts what must always hold: every execution was claimed by exactly one owner and started exactly once.
      const rows = await store.em().find('Execution', { id: { $in: ids } });
      expect(rows).toHaveLength(12);
      for (const row of rows as Array<{ claimedBy: string | null }>) expect(row.claimedBy).toEqual(expect.any(String));
      expect(new Set(rows.map((row: any) => row.claimedBy)).size).toBeLessThanOrEqual(2);  
    });
  }
});
