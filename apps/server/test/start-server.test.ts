import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOKENS, type HoldfastPlugin } from '@holdfast/kernel';
import { InstanceRecord } from '@holdfast/persistence';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { pino } from 'pino';
import { featurePlugins } from '../src/feature-plugins.js';
import { startServer, type ServerHandle } from '../src/start-server.js';
import { serverVersion } from '../src/version.js';
import { createFixtureTree, type FixtureTree } from './adapter-fixtures.js';

const silent = pino({ level: 'silent' });

describe.each(['sqlite', 'postgresql'] as const)('startServer on %s', (dialect) => {
  let dataDir: string;
  let postgres: ThrowawayDatabase | undefined;
  let tree: FixtureTree;
  let handle: ServerHandle | undefined;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'holdfast-server-'));
    postgres = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
    tree = await createFixtureTree();
    await tree.addDependency({ name: 'fixture-storage', holdfast: { kind: 'storage', id: 'fixture' } });
  });

  afterEach(async () => {
    await handle?.close();
    handle = undefined;
    await postgres?.drop();
    await tree.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({ PORT: '0', HOLDFAST_DATA_DIR: dataDir, DATABASE_URL: postgres?.url ?? '' });
  const start = (plugins?: HoldfastPlugin[]) =>
    startServer({ env: env(), logger: silent, manifestPath: tree.manifestPath, plugins, host: '127.0.0.1' });

  it('answers GET /api/health with the database reachable', async () => {
    handle = await start();
    expect(handle.port).toBeGreaterThan(0);
    const response = await fetch(`${handle.url}/api/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; version: string; database: unknown };
    expect(body.status).toBe('ok');
    expect(body.version).toBe(serverVersion());
    expect(body.database).toEqual({ reachable: true, dialect });
  });

  it('registers core services, discovered adapters and the migrated database', async () => {
    handle = await start();
    const { container } = handle;
    expect(container.resolve(TOKENS.RuntimeConfig).port).toBe(0);
    expect(container.resolve(TOKENS.AdapterRegistry).require('storage', 'fixture').origin.packageName).toBe('fixture-storage');
    // The engine plugin is wired in: its storage statistics cache listens for finished backups.
    expect(container.resolve(TOKENS.EventBus).listenerCount('backup_success')).toBeGreaterThan(0);
    const em = container.resolve(ORM_DATABASE).em();
    expect(container.resolve(TOKENS.Database)).toBe(container.resolve(ORM_DATABASE));
    // The persistence plugin's start() ran after migrations: the instance row exists.
    expect(await em.count(InstanceRecord)).toBe(1);
    if (dialect === 'sqlite') await expect(access(join(dataDir, 'holdfast.db'))).resolves.toBeUndefined();
  });

  it('starts plugins in order and on close stops them in reverse, then closes the database', async () => {
    const events: string[] = [];
    const recorder = (name: string): HoldfastPlugin => ({
      name,
      start: async () => void events.push(`start ${name}`),
      stop: async () => void events.push(`stop ${name}`),
    });
    handle = await start([...featurePlugins(), recorder('first'), recorder('second')]);
    const database = handle.container.resolve(TOKENS.Database);
    const { url } = handle;
    await handle.close();
    expect(events).toEqual(['start first', 'start second', 'stop second', 'stop first']);
    expect(await database.isReachable()).toBe(false);
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
  });

  it('refuses to start when an adapter package is bad, naming it', async () => {
    await tree.addCommunity({ name: 'rogue-adapter', holdfast: { kind: 'storage', id: 'rogue' }, definition: { apiVersion: 0 } });
    const attempt = startServer({
      env: { ...env(), HOLDFAST_PLUGIN_DIR: tree.pluginDir },
      logger: silent,
      manifestPath: tree.manifestPath,
    });
    await expect(attempt).rejects.toThrow(/Adapter package rogue-adapter \(.+rogue-adapter\): adapter apiVersion 0 is not supported/);
  });

  it('refuses to start with one plugin left out, naming the plugin and the missing token, before opening the database', async () => {
    const withoutCatalog = featurePlugins({}).filter((plugin) => plugin.name !== 'catalog');
    await expect(start(withoutCatalog)).rejects.toThrow(
      /Plugin "notifications" requires token holdfast:job-catalog, which no plugin provides and the composition did not register/,
    );
    // Nothing was opened: the embedded database file was never created.
    await expect(access(join(dataDir, 'holdfast.db'))).rejects.toThrow();
  });

  it('refuses two plugins that depend on each other, naming the cycle', async () => {
    const first: HoldfastPlugin = { name: 'first', provides: [Symbol.for('test:a')], requires: [Symbol.for('test:b')] };
    const second: HoldfastPlugin = { name: 'second', provides: [Symbol.for('test:b')], requires: [Symbol.for('test:a')] };
    await expect(start([...featurePlugins({}), first, second])).rejects.toThrow(/cycle: "first" -> "second" -> "first"/);
  });
});
