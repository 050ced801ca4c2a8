import { mkdtemp, readFile, rm, writeFile, mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADAPTER_KINDS } from '@holdfast/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallation, GENERATED_VERSIONS, missingBuildOutputs, renderTemplate, SCAFFOLD_KINDS } from '../src/index.js';
import { BIN, runNode } from './helpers.js';

let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'hf-create-adapter-cli-'));
});

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('create-adapter command line', () => {
  it.each([
    [['--id', 'x-y'], /missing --kind \(one of source, storage, notification, retention, naming\)/],
    [['--kind', 'database', '--id', 'x'], /unknown --kind "database"/],
    [['--kind', 'storage'], /missing --id/],
    [['--kind', 'storage', '--id', 'My_Cloud'], /--id "My_Cloud" is not kebab-case/],
    [['--kind', 'storage', '--id', '9lives'], /--id "9lives" is not kebab-case/],
    [['--kind', 'storage', '--id', 'x', '--colour', 'red'], /Unknown option '--colour'/],
    [['--kind', 'storage', '--id', 'x', '--package-name', 'Holdfast Thing'], /--package-name "Holdfast Thing" is not a valid/],
    [['--kind', 'storage', '--id', 'x', '--name', 'say "hi"'], /--name must not contain quotes/],
    [['a', 'b', '--kind', 'storage', '--id', 'x'], /at most one directory/],
  ])('rejects %j with a message naming the problem', async (args, message) => {
    const result = await runNode([BIN, ...args], { cwd: workDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('--help');
    expect(await readdir(workDir)).toEqual([]);
  });

  it('prints usage for --help and exits 0', async () => {
    const result = await runNode([BIN, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--kind <source|storage|notification|retention|naming>');
  });

  it('refuses a non-empty directory and leaves its contents alone', async () => {
    const target = join(workDir, 'occupied');
    await mkdir(target);
    await writeFile(join(target, 'notes.txt'), 'keep me');
    const result = await runNode([BIN, target, '--kind', 'storage', '--id', 'my-cloud']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/occupied is not empty \(1 entries\); refusing to overwrite/);
    expect(await readdir(target)).toEqual(['notes.txt']);
    expect(await readFile(join(target, 'notes.txt'), 'utf8')).toBe('keep me');
  });

  it('fills in the package name, display name and default directory', async () => {
    const result = await runNode(
      [BIN, '--kind', 'notification', '--id', 'pager-duty', '--name', 'PagerDuty', '--package-name', '@acme/holdfast-pd'],
      { cwd: workDir },
    );
    expect(result.code, result.stderr).toBe(0);
    const dir = join(workDir, 'holdfast-pd');
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('@acme/holdfast-pd');
    expect(pkg.holdfast).toEqual({ kind: 'notification', id: 'pager-duty' });
    const index = await readFile(join(dir, 'src/index.ts'), 'utf8');
    expect(index).toContain("displayName: 'PagerDuty'");
    expect(index).toContain('defineNotificationAdapter(');
    expect(index).toContain("import { PagerDutyChannel } from './pager-duty-notification.js'");
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toContain('node_modules/');
  });

  it('with --registry writes registry ranges instead of links to this installation', async () => {
    const result = await runNode([BIN, 'from-registry', '--kind', 'storage', '--id', 'my-cloud', '--registry'], { cwd: workDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('come from the npm registry');
    expect(result.stdout).toMatch(/^ {2}npm install$/m);
    const pkg = JSON.parse(await readFile(join(workDir, 'from-registry', 'package.json'), 'utf8'));
    expect(pkg.devDependencies).toEqual({
      '@holdfast/sdk': GENERATED_VERSIONS.sdkRange,
      '@holdfast/testkit': GENERATED_VERSIONS.testkitRange,
      '@types/node': GENERATED_VERSIONS.typesNode,
      'reflect-metadata': GENERATED_VERSIONS.reflectMetadata,
      typescript: GENERATED_VERSIONS.typescript,
      vitest: GENERATED_VERSIONS.vitest,
    });
  });

  it('finds this repository as the installation, and notices missing sdk/testkit declarations', () => {
    const links = findInstallation();
    expect(links?.['@holdfast/sdk']).toMatch(/sdk\/adapter$/);
    expect(links?.['@holdfast/testkit']).toMatch(/sdk\/testkit$/);
    expect(missingBuildOutputs(links!)).toEqual([]);
    expect(missingBuildOutputs({ ...links!, '@holdfast/testkit': workDir })).toEqual([
      join(workDir, 'dist/index.js'),
      join(workDir, 'dist/index.d.ts'),
    ]);
    expect(findInstallation(tmpdir())).toBeUndefined();
  });

  it('knows exactly the kinds the kernel knows', () => {
    expect([...SCAFFOLD_KINDS]).toEqual([...ADAPTER_KINDS]);
  });

  it('names the template and placeholder when a template uses an unknown one', () => {
    expect(() => renderTemplate('a {{id}} {{idd}}', { id: 'x' }, 'storage/src/index.ts.tmpl')).toThrow(
      'template storage/src/index.ts.tmpl uses unknown placeholder {{idd}}',
    );
  });
});
