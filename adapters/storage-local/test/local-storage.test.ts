import { mkdtemp, readdir, rm, stat, writeFile, mkdir, symlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';

let root: string;

function storageAt(path: string): StorageAdapter {
  return createAdapterInstance<StorageAdapter>(definition, { path });
}

async function keys(storage: StorageAdapter, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of storage.list(prefix)) found.push(entry.key);
  return found;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isAdapterError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'holdfast-local-unit-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('storage-local specifics', () => {
  it('lists by throwing when the root is missing, never by yielding nothing', async () => {
    const storage = storageAt(join(root, 'unmounted'));
    const error = await errorOf(keys(storage));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain('is the drive mounted?');
  });

  it('does not create a missing root on put (an unmounted drive stays visible)', async () => {
    const missing = join(root, 'unmounted');
    const error = await errorOf(storageAt(missing).put('a.bin', Readable.from([Buffer.from('x')])));
    expect(error.code).toBe('NOT_FOUND');
    await expect(stat(missing)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('hides temp files of in-flight puts from listings', async () => {
    const storage = storageAt(root);
    await storage.put('dir/real.bin', Readable.from([Buffer.from('data')]));
    await writeFile(join(root, 'dir', '.real.bin.0123456789abcdef.partial'), 'half');
    expect(await keys(storage)).toEqual(['dir/real.bin']);
    expect((await errorOf(storage.stat('dir/.real.bin.0123456789abcdef.partial'))).code).toBe('CONFIG');
  });

  it('writes files readable by the server user only, with no temp file left', async () => {
    const storage = storageAt(root);
    await storage.put('secure/db.dump', deterministicStream(1000));
    expect((await stat(join(root, 'secure', 'db.dump'))).mode & 0o777).toBe(0o600);
    expect(await readdir(join(root, 'secure'))).toEqual(['db.dump']);
  });

  it('removes emptied parent directories on delete, up to but excluding the root', async () => {
    const storage = storageAt(root);
    await storage.put('a/b/c/file.bin', Readable.from([Buffer.from('x')]));
    await storage.put('a/keep.bin', Readable.from([Buffer.from('y')]));
    await storage.delete('a/b/c/file.bin');
    expect(await readdir(join(root, 'a'))).toEqual(['keep.bin']);
    await storage.delete('a/keep.bin');
    expect(await readdir(root)).toEqual([]);
    await expect(stat(root)).resolves.toBeTruthy();
  });

  it('removes directories a failed put created', async () => {
    const storage = storageAt(root);
    const body = deterministicStream(1_000_000, { failAfterBytes: 100_000 });
    await expect(storage.put('new/deep/dir/file.bin', body)).rejects.toThrow('[storage-local] put of "new/deep/dir/file.bin" failed');
    expect(await readdir(root)).toEqual([]);
  });

  it('never writes outside the root for an escaping key', async () => {
    const storage = storageAt(join(root, 'inner'));
    await mkdir(join(root, 'inner'));
    const error = await errorOf(storage.put('../outside.bin', Readable.from([Buffer.from('x')])));
    expect(error).toMatchObject({ code: 'CONFIG' });
    expect(error.message).toContain('".." segments are not allowed');
    expect(await readdir(root)).toEqual(['inner']);
  });

  it('resolves a relative path against the working directory', async () => {
    const storage = storageAt(relative(process.cwd(), root));
    await storage.put('rel.bin', Readable.from([Buffer.from('relative')]));
    expect((await stat(join(root, 'rel.bin'))).size).toBe(8);
  });

  it('rejects a range starting beyond the object, and clamps an end past it', async () => {
    const storage = storageAt(root);
    await storage.put('r.bin', Readable.from([Buffer.from('0123456789')]));
    expect((await errorOf(storage.get('r.bin', { range: { start: 10 } }))).code).toBe('CONFIG');
    expect((await readAll(await storage.get('r.bin', { range: { start: 8, end: 99 } }))).toString()).toBe('89');
  });

  it('lists symlinked files but does not enter symlinked directories', async () => {
    const storage = storageAt(root);
    await storage.put('real/file.bin', Readable.from([Buffer.from('x')]));
    await symlink(join(root, 'real', 'file.bin'), join(root, 'link.bin'));
    await symlink(join(root, 'real'), join(root, 'loop'));
    expect(await keys(storage)).toEqual(['link.bin', 'real/file.bin']);
  });

  it('reports a file given as root as a failed check', async () => {
    await writeFile(join(root, 'file'), 'x');
    const result = await storageAt(join(root, 'file')).check();
    expect(result.ok).toBe(false);
    expect(result.message).toContain('is not a directory');
  });

  it('rejects a config without a path, naming the field', () => {
    expect(() => storageAt('   ')).toThrow(/path: path is required/);
  });
});

describe('storage-local temp files', () => {
  it('leaves no temp file or folder when the body fails at once', async () => {
    const storage = storageAt(root);
    const body = new Readable({
      read() {
        this.destroy(new Error('source died at once'));
      },
    });
    await expect(storage.put('early/fail.bin', body)).rejects.toThrow('source died at once');
    // A late open of the temp file would land within this pause; nothing may appear.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readdir(root)).toEqual([]);
  });

  it('sweeps a temp file a crash left a day ago as a listing passes it, and keeps a fresh one', async () => {
    const storage = storageAt(root);
    await mkdir(join(root, 'nightly'));
    const stale = join(root, 'nightly', '.db.dump.gz.0123456789abcdef.partial');
    const fresh = join(root, 'nightly', '.db.dump.gz.fedcba9876543210.partial');
    await writeFile(stale, 'half a backup');
    await writeFile(fresh, 'a put in flight');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    await storage.put('nightly/db.dump.gz', Readable.from([Buffer.from('whole backup')]));
    expect(await keys(storage)).toEqual(['nightly/db.dump.gz']);
    expect((await readdir(join(root, 'nightly'))).sort()).toEqual(['.db.dump.gz.fedcba9876543210.partial', 'db.dump.gz']);
  });
});

describe('storage-local crash leftovers (regression, issue 10.8)', () => {
  it('removeIncomplete removes the temp files of interrupted puts of one key, and nothing else', async () => {
    const storage = storageAt(root);
    await storage.put('daily/a.dump', Readable.from([Buffer.from('kept')]));
    await storage.put('daily/b.dump', Readable.from([Buffer.from('other')]));
    for (const name of ['.a.dump.0123456789abcdef.partial', '.a.dump.fedcba9876543210.partial', '.b.dump.0123456789abcdef.partial']) {
      await writeFile(join(root, 'daily', name), 'cut off');
    }

    await storage.removeIncomplete!('daily/a.dump');
    await storage.removeIncomplete!('missing/none.dump');

    expect((await readdir(join(root, 'daily'))).sort()).toEqual(['.b.dump.0123456789abcdef.partial', 'a.dump', 'b.dump']);
    expect((await readAll(await storage.get('daily/a.dump'))).toString()).toBe('kept');
  });
});
