// Issue 10.4: whatever an adapter or the database throws, an execution reaches a final state and the queue moves on.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '@holdfast/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe.each(['sqlite', 'postgresql'] as const)('final status of a run on %s', (dialect) => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeEach(async () => {
    target = await createTarget(dialect);
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-final-'));
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 50 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addJob({ id: 'job', name: 'small' }, 'src', [{ configId: 'disk' }]);
    key = await server.apiKey('ops', ['jobs:execute', 'history:read']);
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('regression (issue 10.4): a failure injected into the final status write still ends the run Failed, and the next queued run runs', async () => {
    const store = (server.engine() as unknown as { store: { finish: (...args: unknown[]) => Promise<boolean> } }).store;
    const realFinish = store.finish.bind(store);
    let injected = 0;
    store.finish = async (...args: unknown[]) => {
      if (injected === 0) {
        injected++;
        throw new Error('DriverException: unrecognized token (injected)');
      }
      return realFinish(...args);
    };
    const first = (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId as string;
    const second = (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId as string;
    const firstDone = await waitForEnd(server.url, key, first, 20_000);
    expect(injected).toBe(1);
    expect(firstDone.status).toBe('Failed');
    expect(firstDone.error).toMatch(/outcome could not be recorded/);
    const secondDone = await waitForEnd(server.url, key, second, 20_000);
    expect(secondDone.status).toBe('Success');
  });

  it('regression (issue 10.4): POST /api/storage/:id/restore refuses a NUL or a control character in `file` with 400, queueing nothing', async () => {
    const restorer = await server.apiKey('restorer', ['storage:restore', 'history:read']);
    for (const file of ['a\u0000b', 'a\tb', 'backup\n.sql.gz']) {
      const answer = await call(server.url, 'POST', '/api/storage/disk/restore', { key: restorer, json: { file } });
      expect(answer.status, JSON.stringify(file)).toBe(400);
      expect(answer.body.issues).toEqual([{ path: 'body.file', message: expect.stringMatching(/^must not contain (a NUL character|control characters)$/) }]);
    }
    const database = server.handle.container.resolve(TOKENS.Database);
    const rows = await (database.em() as { getConnection(): { execute(sql: string): Promise<Array<{ n: unknown }>> } }).getConnection().execute('select count(*) as n from executions');
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('regression (issue 10.4): a restore whose file name holds a NUL (queued past the API) ends Failed with its log stored, and the queue moves on', async () => {
    const engine = server.engine();
    const restore = await engine.enqueueRestore({ file: 'a\u0000b', storageId: 'disk' } as never, { type: 'Manual', label: 'test' });
    const next = (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId as string;
    const restoreDone = await waitForEnd(server.url, key, restore.id, 20_000);
    expect(restoreDone.status).toBe('Failed');
    expect(restoreDone.error).not.toContain('\u0000');
    expect(restoreDone.logs.length).toBeGreaterThan(1);
    expect((await waitForEnd(server.url, key, next, 20_000)).status).toBe('Success');
  });
});
