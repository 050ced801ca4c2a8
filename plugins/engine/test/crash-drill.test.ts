// Acceptance 3: a server process killed with SIGKILL mid-upload. After a restart the execution is Failed with the
// "interrupted" line, nothing of the run is visible on the destination, and the queue goes on.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiateAdapter, TOKENS, type StorageAdapter } from '@holdfast/kernel';
import storageLocal from '@holdfast/storage-local';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED_MESSAGE } from '../src/index.js';
import { InMemoryJobCatalog } from './support/doubles.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const CHILD = fileURLToPath(new URL('./support/crash-child.mjs', import.meta.url));

describe('crash drill (libsql)', () => {
  let target: TestDatabaseTarget | undefined;
  let server: EngineServer | undefined;
  let destination: string | undefined;

  afterEach(async () => {
    await server?.close();
    await target?.drop();
    if (destination) await rm(destination, { recursive: true, force: true });
  });

  it('closes a run killed mid-upload as Failed "interrupted", leaves no visible object, and goes on', async () => {
    target = await createTarget('sqlite');
    destination = await mkdtemp(join(tmpdir(), 'hf-drill-'));
    const child = spawn(process.execPath, [CHILD], {
      env: { ...process.env, HOLDFAST_DATA_DIR: target.dataDir, DRILL_DESTINATION: destination },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout });
    const executionId = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => line.startsWith('ready ') && resolve(line.slice(6)));
      child.once('exit', (code) => reject(new Error(`child exited ${code}: ${stderr}`)));
    });
    // Mid-upload: the local destination holds the hidden temp file of the put.
    const deadline = Date.now() + 20_000;
    while (!(await readdir(destination)).some((name) => name.endsWith('.partial'))) {
      if (Date.now() > deadline) throw new Error(`upload never started: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    // The catalog holds the destination before boot, as the real one (in the database) does when recovery runs.
    const catalog = new InMemoryJobCatalog();
    catalog.addConfig({ configId: 'src', name: 'Small', kind: 'source', adapterId: 'generated', config: { lines: 10 } });
    catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    catalog.addJob({ id: 'next', name: 'next' }, 'src', [{ configId: 'disk' }]);
    server = await startEngineServer(target, { catalog });
    const key = await server.apiKey('ops', ['jobs:execute', 'history:read']);
    const crashed = (await call(server.url, 'GET', `/api/executions/${executionId}?includeLogs=true`, { key })).body.data;
    expect(crashed.status).toBe('Failed');
    expect(crashed.error).toBe(INTERRUPTED_MESSAGE);
    expect(crashed.endedAt).not.toBeNull();
    expect(crashed.logs.at(-1)).toMatchObject({ level: 'error', message: INTERRUPTED_MESSAGE });

    const storage = instantiateAdapter(server.handle.container, storageLocal, { path: destination }) as StorageAdapter;
    const listed: string[] = [];
    for await (const object of storage.list('')) listed.push(object.key);
    expect(listed).toEqual([]);
    // Regression (issue 10.8): the hidden temp file of the killed put is gone too, not left for a day-old sweep.
    expect((await readdir(destination, { recursive: true })).filter((name) => name.endsWith('.partial'))).toEqual([]);

    const next = await call(server.url, 'POST', '/api/jobs/next/run', { key });
    expect((await waitForEnd(server.url, key, next.body.executionId)).status).toBe('Success');
    void TOKENS;
  });
});
