// The community adapter flow of docs/adapters/authoring.md, step by step, in a folder outside the repository and
// with nothing from the registry: `holdfast adapters new` writes the package, `npm install --offline` links the
// installation's sdk, testkit, vitest and typescript, the generated conformance test passes untouched, the
// author's methods pass the full storage suite, and a running server loads the built package from
// HOLDFAST_PLUGIN_DIR, lists it and backs a directory up to it (and restores from it). A second, bare package
// (no node_modules) shows the server hands plugin-dir packages its own @holdfast/sdk.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, runNode } from './helpers.js';
import { useCommunityPackage } from './support/community-package.js';

const FIXTURES = join(REPO_ROOT, 'sdk/create-adapter/test/fixtures/my-nas');

const community = useCommunityPackage('holdfast-community-', 'holdfast-storage-my-nas');
const { npm } = community;

/** Every file under `dir` with its SHA-256, by `/`-separated relative path. */
async function treeOf(dir: string): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    tree[relative(dir, path).split(sep).join('/')] = createHash('sha256').update(await readFile(path)).digest('hex');
  }
  return tree;
}

/** How many tests vitest's summary line says passed; fails when any failed. */
function passedTests(output: string): number {
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  expect(plain).not.toMatch(/Tests\s.*\d+ failed/);
  const passed = /Tests\s+(\d+) passed/.exec(plain);
  expect(passed, plain).not.toBeNull();
  return Number(passed![1]);
}

describe('a community adapter written outside the repository', () => {
  it('1. holdfast adapters new writes a package whose devDependencies link this installation', async () => {
    const result = await runNode([CLI_BIN, 'adapters', 'new', 'storage', 'my-nas', community.packageDir], { cwd: community.work });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('no registry needed');
    const manifest = JSON.parse(await readFile(join(community.packageDir, 'package.json'), 'utf8'));
    expect(manifest.holdfast).toEqual({ kind: 'storage', id: 'my-nas' });
    expect(manifest.peerDependencies).toEqual({ '@holdfast/sdk': '^0.1.0' });
    expect(manifest.devDependencies['@holdfast/sdk']).toBe(`file:${await realpath(join(REPO_ROOT, 'sdk/adapter'))}`);
    expect(manifest.devDependencies['@holdfast/testkit']).toBe(`file:${await realpath(join(REPO_ROOT, 'sdk/testkit'))}`);
    expect(manifest.devDependencies.vitest).toMatch(/^file:.*node_modules\/vitest$/);
  });

  it('2. npm install --offline resolves everything from the installation, without the registry', async () => {
    await npm(['install', '--offline', '--no-audit', '--no-fund']);
    // Links, not copies: the package's tests and a server share one sdk, testkit and vitest.
    expect(await realpath(join(community.packageDir, 'node_modules/@holdfast/sdk'))).toBe(await realpath(join(REPO_ROOT, 'sdk/adapter')));
    expect(await realpath(join(community.packageDir, 'node_modules/vitest'))).toBe(await realpath(join(REPO_ROOT, 'node_modules/vitest')));
  });

  it('3. its generated conformance test passes untouched (npm test)', async () => {
    expect(passedTests(await npm(['test']))).toBeGreaterThan(0);
  });

  it('4. with the methods written, the full storage suite passes and the package builds', async () => {
    await copyFile(join(FIXTURES, 'config.ts.txt'), join(community.packageDir, 'src/config.ts'));
    await copyFile(join(FIXTURES, 'my-nas-storage.ts.txt'), join(community.packageDir, 'src/my-nas-storage.ts'));
    await copyFile(join(FIXTURES, 'conformance.test.ts.txt'), join(community.packageDir, 'test/conformance.test.ts'));
    await rm(join(community.packageDir, 'src/internal'), { recursive: true });
    // The definition checks plus describeStorageAdapter's groups (streaming, atomic put, key safety...).
    expect(passedTests(await npm(['test']))).toBeGreaterThan(20);
    await npm(['run', 'typecheck']);
    await npm(['run', 'build']);
  });

  it('5. a running server loads it from HOLDFAST_PLUGIN_DIR, lists it and backs a directory up to it', async () => {
    const files = join(community.work, 'files');
    const nas = join(community.work, 'nas');
    const restored = join(community.work, 'restored');
    await mkdir(join(files, 'nested'), { recursive: true });
    await mkdir(nas);
    await writeFile(join(files, 'notes.txt'), 'what the backup must bring back');
    await writeFile(join(files, 'nested', 'data.bin'), createHash('sha256').update('seed').digest('hex').repeat(4000));
    const original = await treeOf(files);

    // A second package with no node_modules at all, importing only @holdfast/sdk (authoring.md allows it): only
    // the server's resolve hook can give it the host's sdk, since nothing above this temp folder has one.
    const bare = join(community.pluginDir, 'holdfast-naming-bare');
    await mkdir(bare);
    await writeFile(
      join(bare, 'package.json'),
      JSON.stringify({ name: 'holdfast-naming-bare', version: '1.0.0', type: 'module', exports: './index.js', holdfast: { kind: 'naming', id: 'bare' } }),
    );
    await writeFile(
      join(bare, 'index.js'),
      `import { defineNamingStrategy, injectable, z } from '@holdfast/sdk';
class BareNaming { render() { return 'bare'; } validate() { return { ok: true }; } }
injectable()(BareNaming);
export default defineNamingStrategy({ id: 'bare', displayName: 'Bare', configSchema: z.object({}), capabilities: {}, implementation: BareNaming });
`,
    );

    const server = await community.startServer();
    expect(server.loaded('holdfast-storage-my-nas')).toMatchObject({ adapter: 'storage-my-nas', directory: community.packageDir });
    expect(server.process.stdoutLines.some((line) => line.includes('"package":"holdfast-naming-bare"') && line.includes('adapter loaded'))).toBe(true);
    const { call, create, settled } = await server.signIn();

    const types = await call('GET', '/api/adapters/types');
    expect(types.status).toBe(200);
    const listed = (types.body.data ?? types.body) as Array<{ type: string; adapterId: string; configSchema: any }>;
    const myNas = listed.find((entry) => entry.type === 'storage' && entry.adapterId === 'my-nas');
    expect(myNas?.configSchema.properties).toHaveProperty('path');

    const destination = await create('/api/adapters', { name: 'nas', type: 'storage', adapterId: 'my-nas', config: { path: nas } });
    const tested = await call('POST', '/api/adapters/test-connection', { id: destination.id });
    expect(tested.body, JSON.stringify(tested.body)).toMatchObject({ success: true });
    const source = await create('/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [files] } });
    const job = await create('/api/jobs', {
      name: 'files to the nas',
      schedule: '0 3 * * *',
      sourceId: source.id,
      compression: 'GZIP',
      destinations: [{ configId: destination.id, priority: 0 }],
    });

    const run = await call('POST', `/api/jobs/${job.id}/run`, {});
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const backup = await settled(run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-5))).toBe('Success');

    // The backup landed on the "share", through the community adapter, next to its sidecar.
    const landed = (await readdir(nas, { recursive: true })).map(String).filter((name) => !name.startsWith('.my-nas-tmp'));
    const archive = landed.find((name) => name.endsWith('.tar.gz'));
    expect(archive, landed.join(', ')).toBeDefined();
    const sidecar = JSON.parse(await readFile(join(nas, `${archive}.meta.json`), 'utf8'));
    expect(createHash('sha256').update(await readFile(join(nas, archive!))).digest('hex')).toBe(sidecar.sha256);

    // And it comes back through the same adapter, file for file.
    const restore = await call('POST', `/api/storage/${destination.id}/restore`, { file: archive, targetPath: restored });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const restoreRun = await settled(restore.body.executionId);
    expect(restoreRun.status, JSON.stringify(restoreRun.logs?.slice(-5))).toBe('Success');
    const [root] = await readdir(restored);
    expect(await treeOf(join(restored, root!))).toEqual(original);
  });
});
