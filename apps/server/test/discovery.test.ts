import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { container } from 'tsyringe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adapterName, instantiateAdapter, type AdapterRegistry } from '@holdfast/kernel';
import { discoverAdapters } from '../src/discovery/index.js';
import { createFixtureTree, writePackage, type FixtureTree } from './adapter-fixtures.js';

let tree: FixtureTree;

beforeEach(async () => {
  tree = await createFixtureTree();
  // An ordinary dependency without a holdfast block must be ignored.
  await tree.addDependency({ name: 'plain-library' });
});

afterEach(() => tree.remove());

const discover = (options: { include?: string[]; exclude?: string[]; pluginDir?: string } = {}) =>
  discoverAdapters({ manifestPath: tree.manifestPath, ...options });

const keys = (registry: AdapterRegistry) => registry.list().map((a) => `${a.definition.kind}-${a.definition.id}`);

describe('adapter discovery', () => {
  it('registers adapter dependencies and community packages with their origin', async () => {
    const dependencyDir = await tree.addDependency({ name: 'acme-storage', version: '2.0.1', holdfast: { kind: 'storage', id: 'acme' } });
    await tree.addCommunity({ name: 'community-ping', holdfast: { kind: 'notification', id: 'ping' } });

    const registry = await discover({ pluginDir: tree.pluginDir });

    expect(keys(registry)).toEqual(['notification-ping', 'storage-acme']);
    expect(registry.require('storage', 'acme').origin).toEqual({
      packageName: 'acme-storage',
      version: '2.0.1',
      directory: dependencyDir,
    });
    expect(registry.require('notification', 'ping').origin.directory).toBe(join(tree.pluginDir, 'community-ping'));
  });

  it('follows a conditional exports entry and scoped folders in the plugin dir', async () => {
    await tree.addCommunity(
      { name: '@acme/holdfast-ftp', holdfast: { kind: 'storage', id: 'acme-ftp' }, entryFile: 'lib/main.js', exports: { '.': { import: './lib/main.js' } } },
      '@acme/holdfast-ftp',
    );
    const registry = await discover({ pluginDir: tree.pluginDir });
    expect(registry.require('storage', 'acme-ftp').origin.packageName).toBe('@acme/holdfast-ftp');
  });

  it('rejects a default export with the wrong brand, naming the package and its path', async () => {
    const dir = await tree.addCommunity({ name: 'bad-brand', holdfast: { kind: 'storage', id: 'bad' }, definition: { brand: 'someone.else' } });
    await expect(discover({ pluginDir: tree.pluginDir })).rejects.toThrow(
      `Adapter package bad-brand (${dir}): default export is not a Holdfast adapter definition (missing or wrong brand)`,
    );
  });

  it('rejects an unsupported apiVersion, naming the package', async () => {
    await tree.addDependency({ name: 'future-adapter', holdfast: { kind: 'storage', id: 'future' }, definition: { apiVersion: 99 } });
    await expect(discover()).rejects.toThrow(/Adapter package future-adapter \(.+\): adapter apiVersion 99 is not supported/);
  });

  it('rejects a second package with the same kind-id, naming both packages', async () => {
    await tree.addDependency({ name: 'first-s3', holdfast: { kind: 'storage', id: 's3' } });
    await tree.addCommunity({ name: 'second-s3', holdfast: { kind: 'storage', id: 's3' } });
    await expect(discover({ pluginDir: tree.pluginDir })).rejects.toThrow(
      /Adapter package second-s3 \(.+\): Adapter storage-s3 from package second-s3 is a duplicate: first-s3 already provides it/,
    );
  });

  it('rejects a definition whose kind/id differ from the package.json block', async () => {
    await tree.addDependency({ name: 'mislabelled', holdfast: { kind: 'storage', id: 'sftp' }, definition: { id: 'ftp' } });
    await expect(discover()).rejects.toThrow(
      /Adapter package mislabelled \(.+\): package.json announces storage-sftp but the default export defines storage-ftp/,
    );
  });

  it('rejects a malformed holdfast block and a module that fails to import', async () => {
    await tree.addDependency({ name: 'bad-block', holdfast: { kind: 'database', id: 'x' } });
    await expect(discover()).rejects.toThrow(/Adapter package bad-block \(.+\): package.json "holdfast.kind" must be one of/);

    const other = await createFixtureTree();
    try {
      await other.addDependency({ name: 'broken-code', holdfast: { kind: 'storage', id: 'broken' }, source: 'export default {;' });
      await expect(discoverAdapters({ manifestPath: other.manifestPath })).rejects.toThrow(
        /Adapter package broken-code \(.+\): cannot import .+index\.js/,
      );
    } finally {
      await other.remove();
    }
  });

  it('loads only included adapters', async () => {
    await tree.addDependency({ name: 'a-storage', holdfast: { kind: 'storage', id: 'a' } });
    await tree.addDependency({ name: 'b-storage', holdfast: { kind: 'storage', id: 'b' } });
    expect(keys(await discover({ include: ['storage-b'] }))).toEqual(['storage-b']);
  });

  it('never imports an excluded adapter, so excluding a broken package unblocks startup', async () => {
    await tree.addDependency({ name: 'a-storage', holdfast: { kind: 'storage', id: 'a' } });
    await tree.addCommunity({ name: 'broken', holdfast: { kind: 'storage', id: 'broken' }, source: 'throw new Error("boom")' });
    await expect(discover({ pluginDir: tree.pluginDir })).rejects.toThrow(/Adapter package broken .*boom/);
    expect(keys(await discover({ pluginDir: tree.pluginDir, exclude: ['storage-broken'] }))).toEqual(['storage-a']);
  });

  it('fails on a missing plugin dir and on an uninstalled dependency', async () => {
    await expect(discover({ pluginDir: join(tree.root, 'nope') })).rejects.toThrow(/HOLDFAST_PLUGIN_DIR .*nope does not exist/);
    await mkdir(join(tree.root, 'lonely'));
    const lonely = join(tree.root, 'lonely', 'package.json');
    await writeFile(lonely, JSON.stringify({ name: 'lonely', dependencies: { 'not-there': '1.0.0' } }));
    await expect(discoverAdapters({ manifestPath: lonely })).rejects.toThrow('Dependency not-there of lonely is not installed');
  });
});

describe('community package that imports @holdfast/sdk', () => {
  // Placed inside the repository (.holdfast-tmp is git-ignored) so Node's upward node_modules lookup finds the
  // server's own @holdfast/sdk: the layout docs/operations.md prescribes for packages that need injection.
  const insideInstallation = fileURLToPath(new URL('../../../.holdfast-tmp/', import.meta.url));
  let pluginDir: string;

  beforeEach(async () => {
    await mkdir(insideInstallation, { recursive: true });
    pluginDir = await mkdtemp(join(insideInstallation, 'plugins-'));
  });
  afterEach(() => rm(pluginDir, { recursive: true, force: true }));

  it('shares the server kernel, so its implementation receives its parsed config by injection', async () => {
    await writePackage(join(pluginDir, 'sdk-made'), {
      name: 'sdk-made',
      holdfast: { kind: 'storage', id: 'sdk-made' },
      source: `import { defineStorageAdapter, inject, injectable, TOKENS, z } from '@holdfast/sdk';
class SdkMadeStorage {
  constructor(config) { this.config = config; }
}
inject(TOKENS.AdapterConfig)(SdkMadeStorage, undefined, 0);
injectable()(SdkMadeStorage);
export default defineStorageAdapter({
  id: 'sdk-made',
  displayName: 'SDK made',
  configSchema: z.object({ root: z.string().min(1) }),
  capabilities: {},
  implementation: SdkMadeStorage,
});
`,
    });
    const registry = await discoverAdapters({ manifestPath: tree.manifestPath, pluginDir });
    const { definition } = registry.require('storage', 'sdk-made');
    const instance = instantiateAdapter(container.createChildContainer(), definition, { root: '/srv/backups' });
    expect((instance as { config: unknown }).config).toEqual({ root: '/srv/backups' });
    expect(() => instantiateAdapter(container, definition, { root: '' })).toThrow(/\[storage-sdk-made\] invalid configuration: root/);
  });
});

describe('the adapters apps/server depends on', () => {
  it('are discovered from the real package.json and load, each package named by its one adapter name', async () => {
    const registry = await discoverAdapters();
    const byPackage = Object.fromEntries(registry.list().map((a) => [a.origin.packageName, adapterName(a.definition.kind, a.definition.id)]));
    expect(byPackage).toMatchObject({
      '@holdfast/storage-local': 'storage-local',
      '@holdfast/notify-generic-webhook': 'notify-generic-webhook',
    });
    for (const [packageName, name] of Object.entries(byPackage)) expect(packageName).toBe(`@holdfast/${name}`);
  });
});
