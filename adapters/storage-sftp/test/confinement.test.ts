// Regression tests of issue 10.9 against the real OpenSSH sshd: a symlink inside the destination folder must never
// expose, overwrite or delete a file outside it. Links are resolved by the server (realpath); those that stay inside
// the root keep working.
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshRoot, passwordConfig, removeRoot, sshd, type SshdState } from './server.js';

let state: SshdState;
let base: string;
let root: string;
let outside: string;
const opened: StorageAdapter[] = [];

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAdapterError(error)) throw new Error(`expected an AdapterError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

async function keys(storage: StorageAdapter): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of storage.list('')) found.push(entry.key);
  return found;
}

beforeAll(async () => {
  state = await sshd();
});
beforeEach(async () => {
  base = await freshRoot(state);
  root = join(base, 'destination');
  outside = join(base, 'private');
  await mkdir(root, { mode: 0o777 });
  await mkdir(outside, { mode: 0o777 });
  await writeFile(join(outside, 'secret.txt'), 'outside the destination', { mode: 0o666 });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeRoot(base);
});

function storageAt(path: string): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, passwordConfig(state, path));
  opened.push(instance);
  return instance;
}

describe('regression (issue 10.9): storage-sftp never follows a link out of its root', () => {
  it('does not list, get or stat a file symlink that points outside the root; an inside link still works', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'exposed.txt'));
    await writeFile(join(root, 'own.txt'), 'mine', { mode: 0o666 });
    await symlink(join(root, 'own.txt'), join(root, 'alias.txt'));
    const storage = storageAt(root);
    expect(await keys(storage)).toEqual(['alias.txt', 'own.txt']);
    expect((await errorOf(storage.get('exposed.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.stat('exposed.txt'))).code).toBe('NOT_FOUND');
    expect((await readAll(await storage.get('alias.txt'))).toString()).toBe('mine');
  });

  it('does not read, write or delete through a symlinked folder that leads outside', async () => {
    await symlink(outside, join(root, 'folder'));
    const storage = storageAt(root);
    expect((await errorOf(storage.get('folder/secret.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.stat('folder/secret.txt'))).code).toBe('NOT_FOUND');
    expect((await errorOf(storage.delete('folder/secret.txt'))).code).toBe('CONFIG');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside the destination');
    expect((await errorOf(storage.put('folder/planted.txt', Readable.from([Buffer.from('x')])))).code).toBe('CONFIG');
    await expect(readFile(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await rm(join(root, 'folder'));
  });
});
