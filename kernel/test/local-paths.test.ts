// Unit tests of the local path rule behind issue 10.1: allowed roots, protected paths that no local path may be,
// hold or reach through a symlink, and the source opt-in.
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalPathPolicy, resolveRealPath } from '../src/index.js';

let base: string;
let dataDir: string;
let backups: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'holdfast-policy-'));
  dataDir = join(base, 'data');
  backups = join(base, 'backups');
  await mkdir(dataDir);
  await mkdir(backups);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('regression (issue 10.1): LocalPathPolicy', () => {
  const policy = () => createLocalPathPolicy({ allowedRoots: [backups, base], protectedPaths: [dataDir, join(dataDir, 'system.key')] });

  it('accepts a folder in an allowed root and answers its real path', async () => {
    await mkdir(join(backups, 'nightly'));
    await expect(policy().check(join(backups, 'nightly'), 'storage')).resolves.toBe(await resolveRealPath(join(backups, 'nightly')));
  });

  it('refuses the data directory, a folder inside it, a folder holding it and a symlink to it, for every use', async () => {
    await symlink(dataDir, join(backups, 'link'));
    for (const use of ['storage', 'restore-target', 'source'] as const) {
      for (const path of [dataDir, join(dataDir, 'sub'), base, '/', join(backups, 'link'), join(backups, 'link', 'x')]) {
        await expect(policy().check(path, use), `${use} ${path}`).rejects.toMatchObject({ name: 'LocalPathRefusedError' });
      }
    }
  });

  it('refuses destinations and restore targets outside the allowed roots, but lets sources read there', async () => {
    await expect(policy().check('/etc', 'storage')).rejects.toThrow(/outside the folders allowed.*HOLDFAST_LOCAL_ROOTS/);
    await expect(policy().check('/etc/app', 'restore-target')).rejects.toThrow(/HOLDFAST_LOCAL_ROOTS/);
    await expect(policy().check('/etc', 'source')).resolves.toBe('/etc');
  });

  it('lets sources read the data directory only when the operator opts in', async () => {
    const optedIn = createLocalPathPolicy({ allowedRoots: [], protectedPaths: [dataDir], isProtectedSourceAllowed: true });
    await expect(optedIn.check(dataDir, 'source')).resolves.toBe(await resolveRealPath(dataDir));
    await expect(optedIn.check(dataDir, 'storage')).rejects.toThrow(/data directory/);
    await expect(policy().check(dataDir, 'source')).rejects.toThrow(/HOLDFAST_ALLOW_DATA_DIR_SOURCE/);
  });

  it('resolves a path that does not exist yet through its nearest existing ancestor', async () => {
    await symlink(dataDir, join(backups, 'link'));
    expect(await resolveRealPath(join(backups, 'link', 'new', 'deeper'))).toBe(join(await resolveRealPath(dataDir), 'new', 'deeper'));
    await expect(policy().check(join(backups, 'new', 'deeper'), 'restore-target')).resolves.toContain('deeper');
  });
});
