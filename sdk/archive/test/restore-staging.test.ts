// Issue 41: RestoreStaging builds a restore beside its target and moves it into place only at the end. A target that
// did not exist appears by one rename; an existing one is merged (same-named entries replaced, the rest kept); a move
// that fails half-way is undone, so the target is exactly as it was, staging and set-aside copies gone.
import { chmod, lstat, mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTempDir } from './support/archive-files.js';
import { describeTree } from './support/tree-compare.js';

const failures = vi.hoisted(() => ({ renameAfter: Infinity, renames: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (from: string, to: string) => {
      failures.renames += 1;
      if (failures.renames === failures.renameAfter + 1) throw Object.assign(new Error('simulated EIO'), { code: 'EIO' });
      return actual.rename(from, to);
    },
  };
});
const { ReplaceRefusedError, RestoreStaging } = await import('../src/index.js');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  failures.renameAfter = Infinity;
  failures.renames = 0;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function work() {
  const dir = await makeTempDir('staging');
  cleanups.push(dir.cleanup);
  return dir.path;
}

/** A target with content the staged restore replaces (a file, a folder where a file goes) and content it keeps. */
async function existingTarget(root: string): Promise<string> {
  const target = join(root, 'target');
  await mkdir(join(target, 'docs', 'deeper'), { recursive: true });
  await writeFile(join(target, 'docs', 'a.txt'), 'old a');
  await writeFile(join(target, 'docs', 'deeper', 'keep.txt'), 'keep');
  await mkdir(join(target, 'was-a-folder', 'inner'), { recursive: true });
  await writeFile(join(target, 'mine.txt'), 'mine');
  await symlink('mine.txt', join(target, 'link'));
  await chmod(join(target, 'docs'), 0o750);
  for (const path of ['docs/deeper', 'docs', '']) await utimes(join(target, path), 1_600_000_000, 1_600_000_000);
  return target;
}

async function stageInto(staging: InstanceType<typeof RestoreStaging>, target: string): Promise<string> {
  const staged = await staging.folderFor(target);
  await mkdir(join(staged, 'docs'));
  await writeFile(join(staged, 'docs', 'a.txt'), 'new a');
  await writeFile(join(staged, 'docs', 'b.txt'), 'new b');
  await chmod(join(staged, 'docs'), 0o705);
  await writeFile(join(staged, 'was-a-folder'), 'now a file');
  await mkdir(join(staged, 'fresh', 'sub'), { recursive: true });
  await writeFile(join(staged, 'fresh', 'sub', 'f.txt'), 'fresh');
  return staged;
}

describe('RestoreStaging', () => {
  it('stages beside an existing target, never inside it, and merges on commit', async () => {
    const root = await work();
    const target = await existingTarget(root);
    const staging = new RestoreStaging();
    const staged = await stageInto(staging, target);
    expect(staged.startsWith(join(root, '.target.holdfast-restore-'))).toBe(true);
    expect((await readdir(target)).sort()).toEqual(['docs', 'link', 'mine.txt', 'was-a-folder']);
    expect(await staging.commit({ isRestoredDirectory: (path) => path === join(staged, 'docs') })).toEqual([]);
    expect(await readFile(join(target, 'docs', 'a.txt'), 'utf8')).toBe('new a');
    expect(await readFile(join(target, 'docs', 'b.txt'), 'utf8')).toBe('new b');
    expect(await readFile(join(target, 'docs', 'deeper', 'keep.txt'), 'utf8')).toBe('keep');
    expect(await readFile(join(target, 'was-a-folder'), 'utf8')).toBe('now a file');
    expect(await readFile(join(target, 'fresh', 'sub', 'f.txt'), 'utf8')).toBe('fresh');
    expect(await readFile(join(target, 'mine.txt'), 'utf8')).toBe('mine');
    // A listed folder takes the staged folder's mode; the set-aside originals and the staging are gone.
    expect((await lstat(join(target, 'docs'))).mode & 0o777).toBe(0o705);
    expect((await readdir(root)).sort()).toEqual(['target']);
    expect((await readdir(target)).filter((name) => name.includes('holdfast'))).toEqual([]);
  });

  it('creates a new target with one rename, and removes the folders it created when discarded', async () => {
    const root = await work();
    const committed = new RestoreStaging();
    const staged = await committed.folderFor(join(root, 'x', 'y', 'target'));
    await writeFile(join(staged, 'f.txt'), 'f');
    await committed.commit();
    expect(await readFile(join(root, 'x', 'y', 'target', 'f.txt'), 'utf8')).toBe('f');
    expect((await lstat(join(root, 'x', 'y', 'target'))).mode & 0o777).toBe((await lstat(join(root, 'x', 'y'))).mode & 0o777);
    expect(await readdir(join(root, 'x', 'y'))).toEqual(['target']);

    const discarded = new RestoreStaging();
    await writeFile(join(await discarded.folderFor(join(root, 'p', 'q', 'target')), 'f.txt'), 'f');
    await discarded.discard();
    expect((await readdir(root)).sort()).toEqual(['x']);
  });

  for (const failAt of [0, 1, 2, 3, 4, 5]) {
    it(`undoes a merge whose rename number ${failAt + 1} fails: the target is as it was`, async () => {
      const root = await work();
      const target = await existingTarget(root);
      const before = await describeTree(target);
      const staging = new RestoreStaging();
      const staged = await stageInto(staging, target);
      failures.renames = 0;
      failures.renameAfter = failAt;
      await expect(staging.commit({ isRestoredDirectory: (path) => path === join(staged, 'docs') })).rejects.toThrow(/put back as it was/);
      failures.renameAfter = Infinity;
      expect(await describeTree(target)).toEqual(before);
      expect((await readdir(root)).sort()).toEqual(['target']);
    });
  }
  it('refuseReplacing (a restore without overwrite): an entry in the way fails the commit before anything moves, target and staging as they were / gone', async () => {
    const root = await work();
    const target = await existingTarget(root);
    const before = await describeTree(target);
    const staging = new RestoreStaging();
    await stageInto(staging, target);
    const error = await staging.commit({ refuseReplacing: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReplaceRefusedError);
    expect((error as InstanceType<typeof ReplaceRefusedError>).path).toMatch(new RegExp(`^${target}/(docs/a\\.txt|was-a-folder)$`));
    expect(await describeTree(target)).toEqual(before);
    expect((await readdir(root)).sort()).toEqual(['target']);
    // Nothing in the way: the merge goes ahead (folders merged into folders, new names added).
    const clean = new RestoreStaging();
    const staged = await clean.folderFor(target);
    await mkdir(join(staged, 'docs'));
    await writeFile(join(staged, 'docs', 'new.txt'), 'new');
    expect(await clean.commit({ refuseReplacing: true })).toEqual([]);
    expect(await readFile(join(target, 'docs', 'new.txt'), 'utf8')).toBe('new');
    // A new target that appeared, not empty, before the commit is refused too.
    const late = new RestoreStaging();
    await writeFile(join(await late.folderFor(join(root, 'late')), 'f.txt'), 'f');
    await mkdir(join(root, 'late'));
    await writeFile(join(root, 'late', 'there.txt'), 'x');
    await expect(late.commit({ refuseReplacing: true })).rejects.toBeInstanceOf(ReplaceRefusedError);
    expect(await readdir(join(root, 'late'))).toEqual(['there.txt']);
  });
});
