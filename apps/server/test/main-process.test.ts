import { existsSync } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFixtureTree, type FixtureTree } from './adapter-fixtures.js';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('node apps/server/dist/main.js', () => {
  let dataDir: string;
  let tree: FixtureTree;
  let running: SpawnedProcess | undefined;

  beforeAll(() => {
    if (!existsSync(MAIN)) {
      throw new Error(`${MAIN} is missing: build first (npm test does; or npx turbo run build --filter=@holdfast/server...)`);
    }
  });

  beforeEach(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'holdfast-main-')), 'data');
    tree = await createFixtureTree();
    await tree.addCommunity({ name: 'community-echo', version: '0.3.0', holdfast: { kind: 'notification', id: 'echo' } });
  });

  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
    running = undefined;
    await tree.remove();
    await rm(join(dataDir, '..'), { recursive: true, force: true });
  });

  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    PORT: '0',
    HOLDFAST_DATA_DIR: dataDir,
    HOLDFAST_PLUGIN_DIR: tree.pluginDir,
    LOG_LEVEL: 'info',
    ...extra,
  });

  it('serves, then shuts down cleanly on SIGTERM with exit code 0', async () => {
    running = spawnNode(MAIN, [], env());
    const listening = await running.waitForLog('holdfast listening');
    const response = await fetch(`http://127.0.0.1:${String(listening.port)}/api/health`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { database: { reachable: boolean } }).database.reachable).toBe(true);

    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    const messages = running.stdoutLines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(
      expect.arrayContaining(['database opened', 'shutdown requested', 'stopping HTTP listener', 'closing database', 'shutdown complete']),
    );
    expect(messages.indexOf('stopping HTTP listener')).toBeLessThan(messages.indexOf('closing database'));
    const heap = running.stdoutLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((e) => e.msg === 'V8 heap growth set');
    expect(heap?.heapGrowingPercent).toBe('auto');
    expect(heap?.youngCollections).toBe('auto');
    const loaded = running.stdoutLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.msg === 'adapter loaded');
    expect(loaded.map((entry) => entry.package)).toEqual(
      expect.arrayContaining(['@holdfast/storage-local', '@holdfast/notify-generic-webhook', 'community-echo']),
    );
    await expect(access(join(dataDir, 'holdfast.db'))).resolves.toBeUndefined();
  });

  it('exits 1 with a one-line error naming a bad HOLDFAST_HEAP_GROWING_PERCENT, before touching the data directory', async () => {
    running = spawnNode(MAIN, [], env({ HOLDFAST_HEAP_GROWING_PERCENT: '1.5' }));
    expect((await running.exited).code).toBe(1);
    const stderr = running.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toBe('holdfast: HOLDFAST_HEAP_GROWING_PERCENT must be auto or an integer from 0 to 400 (0: V8\'s own heap growth), got "1.5"');
    expect(existsSync(join(dataDir, 'holdfast.db'))).toBe(false);
  });

  it('exits 1 with a one-line error naming a bad HOLDFAST_YOUNG_COLLECTIONS, before touching the data directory', async () => {
    running = spawnNode(MAIN, [], env({ HOLDFAST_YOUNG_COLLECTIONS: 'always' }));
    expect((await running.exited).code).toBe(1);
    const stderr = running.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toBe('holdfast: HOLDFAST_YOUNG_COLLECTIONS must be auto or off, got "always"');
    expect(existsSync(join(dataDir, 'holdfast.db'))).toBe(false);
  });

  it('exits 1 with a one-line error naming a bad community package', async () => {
    await tree.addCommunity({ name: 'community-broken', holdfast: { kind: 'storage', id: 'broken' }, definition: { brand: 'nope' } });
    running = spawnNode(MAIN, [], env());
    expect((await running.exited).code).toBe(1);
    const stderr = running.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^holdfast: Adapter package community-broken \(.+community-broken\): default export is not a Holdfast adapter/);
  });
});
