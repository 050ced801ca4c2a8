import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { basicConfig, digestConfig, freshRoot, removeRoot, webdavServer, type WebdavState } from './server.js';

let state: WebdavState;
let root: string;
let local: string;
const opened: StorageAdapter[] = [];

function storage(config: Record<string, unknown>): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, config);
  opened.push(instance);
  return instance;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAdapterError(error)) throw new Error(`expected an AdapterError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

/** Every file below `dir`, relative, recursively (folders are not listed). */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1)).sort();
}

/**
 * Files below `dir` once Apache finished with aborted uploads: mod_dav_fs streams a PUT into its own `.davfs.tmp*`
 * file and deletes it itself when the request body breaks off, a moment after the client gave up.
 */
async function settledFilesBelow(dir: string): Promise<string[]> {
  let files = await filesBelow(dir);
  for (let i = 0; i < 100 && files.some((file) => file.includes('.davfs.tmp')); i++) {
    await new Promise((r) => setTimeout(r, 100));
    files = await filesBelow(dir);
  }
  return files;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const text = (value: string) => Readable.from([Buffer.from(value)]);

beforeAll(async () => {
  state = await webdavServer();
});
beforeEach(async () => {
  ({ root, local } = await freshRoot(state));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeRoot(state, root);
});

describe('storage-webdav connection failures', () => {
  it('a wrong password fails check() with AUTH naming the cause, never echoing it, and writes nothing', async () => {
    const wrong = storage({ ...basicConfig(state, root), password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-webdav\] check of .* failed: the server refused the username or password \(PROPFIND answered HTTP 401\)$/);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    const error = await errorOf(wrong.put('x/y.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain('Wr0ng-S3cret-99');
    expect(await readdir(local)).toEqual([]);
  });

  it('an unreachable server (closed loopback port) fails check() and put with TRANSIENT', async () => {
    const port = await closedPort();
    const down = storage({ ...basicConfig(state, root), url: `http://127.0.0.1:${port}/dav` });
    const health = await down.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-webdav\] check of .* failed: .*ECONNREFUSED/);
    const error = await errorOf(down.put('x.txt', text('never')));
    expect(error.code).toBe('TRANSIENT');
    expect(await readdir(local)).toEqual([]);
  });

  it('a missing root fails check() with NOT_FOUND, and list and put throw instead of creating it', async () => {
    const missing = storage(basicConfig(state, `${root}/not-there`));
    const health = await missing.check();
    expect(health).toMatchObject({ ok: false });
    expect(health.message).toContain(`the root folder ${state.basicUrl}${root}/not-there does not exist`);
    const listing = await errorOf((async () => {
      for await (const _entry of missing.list('')) return;
    })());
    expect(listing.code).toBe('NOT_FOUND');
    expect((await errorOf(missing.put('a/b.txt', text('never')))).code).toBe('NOT_FOUND');
    expect(await readdir(local)).toEqual([]);
  });

  it('a successful check() leaves nothing behind', async () => {
    const dav = storage(basicConfig(state, root));
    expect(await dav.check()).toMatchObject({ ok: true, message: `${state.basicUrl}${root} is a writable WebDAV folder` });
    expect(await readdir(local)).toEqual([]);
  });

  it('refuses credentials inside the url (they would end up in error messages)', () => {
    expect(() => createAdapterInstance(definition, { ...basicConfig(state, root), url: `http://u:secret@127.0.0.1:${state.port}/dav` })).toThrow(
      /username and password in their own fields/,
    );
  });
});

describe('storage-webdav digest auth', () => {
  it('stores through the digest-only location, which refuses basic auth', async () => {
    const dav = storage(digestConfig(state, root));
    expect((await dav.check()).ok).toBe(true);
    await dav.put('d/file.bin', deterministicStream(3_000_000, { seed: 'digest' }));
    expect((await readFile(join(local, 'd', 'file.bin'))).equals(await readAll(deterministicStream(3_000_000, { seed: 'digest' })))).toBe(true);
    const basicAgainstDigest = storage({ ...digestConfig(state, root), authType: 'basic' });
    expect((await errorOf(basicAgainstDigest.stat('d/file.bin'))).code).toBe('AUTH');
    const wrong = storage({ ...digestConfig(state, root), password: 'nope-nope' });
    expect((await errorOf(wrong.put('d/other.bin', text('never')))).code).toBe('AUTH');
    expect(await filesBelow(local)).toEqual(['d/file.bin']);
  });
});

describe('storage-webdav transfers', () => {
  it('an aborted put leaves neither the object nor a temp file, and keeps the old object', async () => {
    const dav = storage(basicConfig(state, root));
    await dav.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    let seen = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 1024 * 1024 && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await errorOf(dav.put('keep/existing.bin', deterministicStream(32 * 1024 * 1024).pipe(tap), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(await settledFilesBelow(local)).toEqual(['keep/existing.bin']);
    expect(await readFile(join(local, 'keep', 'existing.bin'), 'utf8')).toBe('old');
    const broken = await errorOf(dav.put('new/dir/file.bin', deterministicStream(1_000_000, { failAfterBytes: 200_000 })));
    expect(broken.code).toBe('TRANSIENT');
    expect(await settledFilesBelow(local)).toEqual(['keep/existing.bin']);
  });

  it('calls made with an already aborted signal reject with ABORTED, store nothing and leave the process running', async () => {
    // Regression: node-fetch destroyed the request body of such a request with an error nothing listened to, an
    // uncaught exception that ended the process (a cancelled run's next request).
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const dav = storage(basicConfig(state, root));
      const cancelled = AbortSignal.abort();
      const listing = (async () => {
        for await (const _ of dav.list('', { signal: cancelled })) void _;
      })();
      const errors = [await errorOf(dav.put('a/b.bin', text('x'), { signal: cancelled })), await errorOf(dav.get('a/b.bin', { signal: cancelled })), await errorOf(listing)];
      expect(errors.map((error) => error.code)).toEqual(['ABORTED', 'ABORTED', 'ABORTED']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(uncaught).toEqual([]);
      expect(await settledFilesBelow(local)).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('lands 16 concurrent puts into the same new folders (racing MKCOLs are not errors)', async () => {
    // Regression: Apache answers a MKCOL that lost the race to a concurrent one with 403, which failed the put.
    const dav = storage(basicConfig(state, root));
    const keys = Array.from({ length: 16 }, (_, index) => `race/deeper/${index}.txt`);
    await Promise.all(keys.map((key) => dav.put(key, text(key))));
    expect(await filesBelow(local)).toEqual(keys.slice().sort());
  });

  it('sweeps a temp file a crash left a day ago as a listing passes it, and keeps a fresh one', async () => {
    const dav = storage(basicConfig(state, root));
    await dav.put('nightly/db.dump.gz', text('whole backup'));
    const stale = join(local, 'nightly', '.db.dump.gz.0123456789abcdef.partial');
    const fresh = join(local, 'nightly', '.db.dump.gz.fedcba9876543210.partial');
    await writeFile(stale, 'half a backup');
    await writeFile(fresh, 'a put in flight');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    const listed: string[] = [];
    for await (const entry of dav.list('')) listed.push(entry.key);
    expect(listed).toEqual(['nightly/db.dump.gz']);
    expect((await readdir(join(local, 'nightly'))).sort()).toEqual(['.db.dump.gz.fedcba9876543210.partial', 'db.dump.gz']);
  });

  it('delete of a key that names a folder keeps the objects below it (WebDAV DELETE would be recursive)', async () => {
    const dav = storage(basicConfig(state, root));
    await dav.put('folder/inner.txt', text('inner'));
    await dav.delete('folder');
    expect(await filesBelow(local)).toEqual(['folder/inner.txt']);
    await expect(dav.stat('folder')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(dav.get('folder')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('stores exactly the bytes on the server disk and reads a range from the middle', async () => {
    const dav = storage(basicConfig(state, root));
    const body = await readAll(deterministicStream(100_000, { seed: 'disk' }));
    expect(await dav.put('disk/one.bin', Readable.from([body]))).toEqual({ key: 'disk/one.bin', size: 100_000 });
    expect((await readFile(join(local, 'disk', 'one.bin'))).equals(body)).toBe(true);
    const middle = await readAll(await dav.get('disk/one.bin', { range: { start: 40_000, end: 40_099 } }));
    expect(middle.equals(body.subarray(40_000, 40_100))).toBe(true);
    expect((await errorOf(dav.get('disk/one.bin', { range: { start: 100_000 } }))).code).toBe('CONFIG');
    expect(await dav.put('disk/empty.bin', Readable.from([]))).toEqual({ key: 'disk/empty.bin', size: 0 });
    expect((await readAll(await dav.get('disk/empty.bin'))).length).toBe(0);
  });
});
