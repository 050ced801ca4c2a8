// Regression tests of issue 10.9 (symlinks leading out of the destination) and 10.1 (the adapter itself refuses a
// root the host's local path rule forbids, at use time, whatever was saved).
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalPathPolicy, isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';

let base: string;
let root: string;
let outside: string;

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isAdapterError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

async function keys(storage: StorageAdapter): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of storage.list('')) found.push(entry.key);
  return found;
}

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'holdfast-local-confine-'));
  root = join(base, 'destination');
  outside = join(base, 'private');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'outside the destination');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('regression (issue 10.9): storage-local never follows a link out of its root', () => {
  it('does not list, get or stat a file symlink that points outside the root', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'exposed.txt'));
    await writeFile(join(root, 'own.txt'), 'mine');
    await symlink(join(root, 'own.txt'), join(root, 'alias.txt'));
    const storage = createAdapterInstance<StorageAdapter>(definition, { path: root });
    expect(await keys(storage)).toEqual(['alias.txt', 'own.txt']);
    expect((await errorOf(storage.get('exposed.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.stat('exposed.txt'))).code).toBe('NOT_FOUND');
    // A link that stays inside the root is still an object.
    expect((await readAll(await storage.get('alias.txt'))).toString()).toBe('mine');
  });

  it('does not read, write or delete through a symlinked folder that leads outside', async () => {
    await symlink(outside, join(root, 'folder'));
    const storage = createAdapterInstance<StorageAdapter>(definition, { path: root });
    expect((await errorOf(storage.get('folder/secret.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.stat('folder/secret.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.delete('folder/secret.txt'))).code).toBe('CONFIG');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside the destination');
    expect((await errorOf(storage.put('folder/planted.txt', Readable.from([Buffer.from('x')])))).code).toBe('CONFIG');
    await expect(readFile(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('regression (issue 10.1): storage-local refuses a root the local path rule forbids, at use time', () => {
  it('fails check, list, get and put when the root is (or became a link to) a protected folder', async () => {
    const policy = createLocalPathPolicy({ allowedRoots: [base], protectedPaths: [outside] });
    const allowed = createAdapterInstance<StorageAdapter>(definition, { path: root }, { localPaths: policy });
    expect((await allowed.check()).ok).toBe(true);
    // The saved folder is swapped for a link to the protected one after the config was accepted.
    await rm(root, { recursive: true });
    await symlink(outside, root);
    const swapped = createAdapterInstance<StorageAdapter>(definition, { path: root }, { localPaths: policy });
    const check = await swapped.check();
    expect(check.ok).toBe(false);
    expect(check.message).toContain('data directory');
    expect((await errorOf(swapped.get('secret.txt'))).code).toBe('CONFIG');
    expect((await errorOf(keys(swapped))).code).toBe('CONFIG');
    expect((await errorOf(swapped.delete('secret.txt'))).code).toBe('CONFIG');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside the destination');
    const elsewhere = createAdapterInstance<StorageAdapter>(definition, { path: '/' }, { localPaths: policy });
    expect((await errorOf(elsewhere.put('x.bin', Readable.from([Buffer.from('x')])))).code).toBe('CONFIG');
  });
});
