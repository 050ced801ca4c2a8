// `holdfast adapters new`: the scaffolder run from this installation. The whole authoring flow (install, tests,
// loading by a server) is tested in sdk/create-adapter/test/outside-repository.test.ts; this checks the command's
// own arguments, output and exit codes.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnNode } from '@holdfast/tooling/harness/spawned-process';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
let workDir: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm test does; or npx turbo run build --filter=@holdfast/cli...)`);
});
beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'holdfast-cli-new-'));
});
afterEach(() => rm(workDir, { recursive: true, force: true }));

async function run(args: string[]) {
  const child = spawnNode(CLI, args, { PATH: process.env.PATH });
  const { code } = await child.exited;
  return { code, stdout: child.stdoutLines.join('\n'), stderr: child.stderr() };
}

describe('holdfast adapters new', () => {
  it('writes a package linked to this installation, with the next steps', async () => {
    const target = join(workDir, 'holdfast-notification-pager');
    const result = await run(['adapters', 'new', 'notification', 'pager', target, '--name', 'Pager']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Created holdfast-notification-pager (notification adapter "pager")');
    expect(result.stdout).toContain('npm install --offline');
    const manifest = JSON.parse(await readFile(join(target, 'package.json'), 'utf8'));
    expect(manifest.holdfast).toEqual({ kind: 'notification', id: 'pager' });
    expect(manifest.devDependencies['@holdfast/testkit']).toMatch(/^file:\/.*sdk\/testkit$/);
    expect(await readFile(join(target, 'src/index.ts'), 'utf8')).toContain("displayName: 'Pager'");
  });

  it('answers a bad kind or id with the usage exit code and a message naming it, writing nothing', async () => {
    const badKind = await run(['adapters', 'new', 'database', 'pager', join(workDir, 'a')]);
    expect(badKind.code).toBe(10);
    expect(badKind.stderr).toMatch(/holdfast adapters new: unknown --kind "database"/);
    const badId = await run(['adapters', 'new', 'storage', 'My_Nas', join(workDir, 'b')]);
    expect(badId.code).toBe(10);
    expect(badId.stderr).toMatch(/--id "My_Nas" is not kebab-case/);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('refuses a non-empty target with exit code 1', async () => {
    const target = join(workDir, 'taken');
    expect((await run(['adapters', 'new', 'storage', 'my-nas', target])).code).toBe(0);
    const again = await run(['adapters', 'new', 'storage', 'my-nas', target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/taken is not empty/);
  });
});
