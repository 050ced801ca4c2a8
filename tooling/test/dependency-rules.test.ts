// ARCHITECTURE.md section 1, asserted over every workspace package the root package.json names, so a new package
// is covered the moment it exists. Each failure lists the package and the offending dependency or import.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  adapterIdBranchViolations,
  adapterViolations,
  databaseClientViolations,
  databaseHandleCastViolations,
  escapingImportViolations,
  kernelViolations,
  packageHygieneViolations,
  platformViolations,
  pluginViolations,
} from './rules.js';
import { readWorkspace, REPO_ROOT, type WorkspacePackage } from './workspace.js';

let workspace: WorkspacePackage[];
const under = (prefix: string) => workspace.filter((pkg) => pkg.dir.startsWith(prefix));

/** The TypeScript files under a package's `src/`, with their text. */
async function sourceTextsOf(pkg: WorkspacePackage): Promise<Array<{ file: string; text: string }>> {
  const src = join(REPO_ROOT, pkg.dir, 'src');
  const names = (await readdir(src, { recursive: true }).catch(() => [] as string[])).map(String).filter((name) => /\.(ts|mts|tsx)$/.test(name) && !name.endsWith('.d.ts'));
  return Promise.all(names.map(async (name) => ({ file: `src/${name}`, text: await readFile(join(src, name), 'utf8') })));
}

function report(problems: string[]): string {
  return `\n${problems.map((p) => `  - ${p}`).join('\n')}\n`;
}

beforeAll(async () => {
  workspace = await readWorkspace();
});

describe('dependency rules of the workspace', () => {
  it('discovers the packages from the root workspaces globs', () => {
    const dirs = workspace.map((pkg) => pkg.dir);
    expect(dirs).toEqual(expect.arrayContaining(['kernel', 'sdk/adapter', 'sdk/testkit', 'sdk/create-adapter', 'tooling']));
    expect(under('adapters/').length).toBeGreaterThan(0);
    expect(under('plugins/').length).toBeGreaterThan(0);
  });

  it('@holdfast/kernel depends on no koa, no @mikro-orm and no @holdfast package', () => {
    const kernel = workspace.find((pkg) => pkg.name === '@holdfast/kernel');
    expect(kernel, 'no workspace package is named @holdfast/kernel').toBeDefined();
    const problems = kernelViolations(kernel!);
    expect(problems, report(problems)).toEqual([]);
  });

  it('adapters carry a matching holdfast block, peer-depend on @holdfast/sdk ^0.x and import nothing else of ours', () => {
    const problems = under('adapters/').flatMap(adapterViolations);
    expect(problems, report(problems)).toEqual([]);
  });

  it('plugins never depend on or import another plugin package', () => {
    const plugins = under('plugins/');
    const problems = plugins.flatMap((plugin) => pluginViolations(plugin, plugins));
    expect(problems, report(problems)).toEqual([]);
  });

  it('platform packages never depend on or import a plugin', () => {
    const plugins = under('plugins/');
    expect(under('platform/').length).toBeGreaterThan(0);
    const problems = under('platform/').flatMap((pkg) => platformViolations(pkg, plugins));
    expect(problems, report(problems)).toEqual([]);
  });

  it('no plugin branches on a concrete adapter id (adapterId compared with a literal)', async () => {
    const plugins = under('plugins/');
    const problems = (await Promise.all(plugins.map(async (plugin) => adapterIdBranchViolations(plugin, await sourceTextsOf(plugin))))).flat();
    expect(problems, report(problems)).toEqual([]);
  });

  it('no plugin depends on a database client library (pg, mysql2, ioredis...)', () => {
    const problems = under('plugins/').flatMap(databaseClientViolations);
    expect(problems, report(problems)).toEqual([]);
  });

  it('no plugin or app casts the database handle (typed migrations, em() and pgClient() instead)', async () => {
    const outsidePlatform = workspace.filter((pkg) => pkg.dir.startsWith('plugins/') || pkg.dir.startsWith('apps/'));
    const problems = (await Promise.all(outsidePlatform.map(async (pkg) => databaseHandleCastViolations(pkg, await sourceTextsOf(pkg))))).flat();
    expect(problems, report(problems)).toEqual([]);
  });

  it('no package reaches into another package by a relative import', () => {
    const problems = workspace.flatMap(escapingImportViolations);
    expect(problems, report(problems)).toEqual([]);
  });

  it('every workspace package has a README.md and a 0.x version', () => {
    const problems = workspace.flatMap(packageHygieneViolations);
    expect(problems, report(problems)).toEqual([]);
  });

  it('changeset status exits 0', async () => {
    const result = await new Promise<{ code: number; output: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        ['node_modules/@changesets/cli/bin.js', 'status'],
        { cwd: REPO_ROOT, timeout: 60_000 },
        (error, stdout, stderr) => {
          if (error && typeof error.code !== 'number') reject(error);
          else resolve({ code: error ? (error.code as number) : 0, output: `${stdout}${stderr}` });
        },
      );
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('Packages to be bumped');
  });
});
