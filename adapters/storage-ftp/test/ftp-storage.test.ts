import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { explicitConfig, freshRoot, implicitConfig, plainConfig, removeRoot, vsftpd, type VsftpdState } from './server.js';

let state: VsftpdState;
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

/** Every entry below `dir` (files and folders), relative, sorted. */
async function entriesBelow(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort();
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const text = (value: string) => Readable.from([Buffer.from(value)]);

beforeAll(async () => {
  state = await vsftpd();
});
beforeEach(async () => {
  ({ root, local } = await freshRoot(state));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeRoot(state, root);
});

describe('storage-ftp connection failures', () => {
  it('a wrong password fails check() with AUTH naming the cause, never echoing it, and writes nothing', async () => {
    const wrong = storage({ ...(await explicitConfig(state, root)), password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-ftp\] check of .* failed: server answered 530 Login incorrect\. \(wrong username or password/);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    const error = await errorOf(wrong.put('x/y.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain('Wr0ng-S3cret-99');
    expect(await readdir(local)).toEqual([]);
  });

  it('an unreachable server (closed loopback port) fails check() and put with TRANSIENT', async () => {
    const down = storage({ ...(await explicitConfig(state, root)), port: await closedPort() });
    const health = await down.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-ftp\] check of .* failed: .*ECONNREFUSED/);
    expect((await errorOf(down.put('x.txt', text('never')))).code).toBe('TRANSIENT');
    expect((await errorOf(down.get('x.txt'))).code).toBe('TRANSIENT');
  });

  it('a missing root fails check() with NOT_FOUND, and list and put throw instead of creating it', async () => {
    const missing = storage(await explicitConfig(state, `${root}/not-there`));
    const health = await missing.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain(`root ${root}/not-there does not exist on ${state.host}:${state.port}`);
    const listing = await errorOf((async () => {
      for await (const _entry of missing.list('')) return;
    })());
    expect(listing.code).toBe('NOT_FOUND');
    expect((await errorOf(missing.put('a/b.txt', text('never')))).code).toBe('NOT_FOUND');
    expect(await readdir(local)).toEqual([]);
  });

  it('refuses a server certificate it cannot verify (CONFIG), and accepts it with rejectUnauthorized false', async () => {
    const { ca: _ca, ...untrusted } = await explicitConfig(state, root);
    const health = await storage(untrusted).check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/the server certificate was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    expect((await storage({ ...untrusted, rejectUnauthorized: false }).check()).ok).toBe(true);
  });

  it('a successful check() leaves nothing behind and names the transport', async () => {
    const ftp = storage(await explicitConfig(state, root));
    expect(await ftp.check()).toMatchObject({ ok: true, message: `${root} on ${state.host}:${state.port} is a writable directory (explicit TLS)` });
    expect(await readdir(local)).toEqual([]);
  });

  it('resolves a relative root against the login directory', async () => {
    const ftp = storage(await explicitConfig(state, root.slice(1)));
    await ftp.put('rel/file.txt', text('relative'));
    expect(await readFile(join(local, 'rel', 'file.txt'), 'utf8')).toBe('relative');
  });
});

describe('storage-ftp transfers', () => {
  it('an aborted put leaves neither the object nor a temp file, and a failed put removes the folders it made', async () => {
    const ftp = storage(await explicitConfig(state, root));
    await ftp.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    let seen = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 1024 * 1024 && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await errorOf(ftp.put('keep/existing.bin', deterministicStream(32 * 1024 * 1024).pipe(tap), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(await entriesBelow(local)).toEqual(['keep', 'keep/existing.bin']);
    expect(await readFile(join(local, 'keep', 'existing.bin'), 'utf8')).toBe('old');
    const broken = await errorOf(ftp.put('new/dir/file.bin', deterministicStream(1_000_000, { failAfterBytes: 200_000 })));
    expect(broken.code).toBe('TRANSIENT');
    expect(await entriesBelow(local)).toEqual(['keep', 'keep/existing.bin']);
  });

  it('keeps concurrent puts, gets, stats and listings apart on a single control connection', async () => {
    const ftp = storage({ ...(await explicitConfig(state, root)), maxConnections: 1 });
    const keys = Array.from({ length: 6 }, (_, index) => `mix/${index}.bin`);
    await Promise.all(keys.slice(0, 3).map((key) => ftp.put(key, deterministicStream(300_000, { seed: key }))));
    const results = await Promise.all([
      ...keys.slice(3).map((key) => ftp.put(key, deterministicStream(300_000, { seed: key }))),
      ...keys.slice(0, 3).map(async (key) => readAll(await ftp.get(key))),
      ...keys.slice(0, 3).map((key) => ftp.stat(key)),
    ]);
    for (const [index, key] of keys.slice(0, 3).entries()) {
      expect((results[3 + index] as Buffer).equals(await readAll(deterministicStream(300_000, { seed: key })))).toBe(true);
      expect(results[6 + index]).toMatchObject({ key, size: 300_000 });
    }
    for (const key of keys) expect((await readFile(join(local, key))).equals(await readAll(deterministicStream(300_000, { seed: key })))).toBe(true);
    const listed: string[] = [];
    for await (const entry of ftp.list('mix/')) {
      listed.push(entry.key);
      await ftp.stat(entry.key); // iterating must not hold the only connection
    }
    expect(listed).toEqual(keys);
  });

  it('a range read that stops early drops its connection, and the next calls work', async () => {
    const ftp = storage({ ...(await explicitConfig(state, root)), maxConnections: 1 });
    const body = await readAll(deterministicStream(2_000_000, { seed: 'range' }));
    await ftp.put('r/big.bin', Readable.from([body]));
    for (const [start, end] of [[10, 19], [1_500_000, 1_500_009], [0, 0]] as const) {
      expect((await readAll(await ftp.get('r/big.bin', { range: { start, end } }))).equals(body.subarray(start, end + 1))).toBe(true);
    }
    const half = await ftp.get('r/big.bin');
    half.destroy();
    expect((await ftp.stat('r/big.bin')).size).toBe(2_000_000);
    expect(await ftp.put('r/empty.bin', Readable.from([]))).toEqual({ key: 'r/empty.bin', size: 0 });
    expect((await readAll(await ftp.get('r/empty.bin'))).length).toBe(0);
    // Regression: an empty body ended the TLS data connection too early and vsftpd broke the transfer.
    const implicit = storage(await implicitConfig(state, root));
    expect(await implicit.put('r/empty-implicit.bin', Readable.from([]))).toEqual({ key: 'r/empty-implicit.bin', size: 0 });
    expect((await readFile(join(local, 'r', 'empty-implicit.bin'))).length).toBe(0);
  });

  it('sweeps a temp file a crash left a day ago as a listing passes it, and keeps a fresh one', async () => {
    const ftp = storage(plainConfig(state, root));
    await ftp.put('nightly/db.dump.gz', text('whole backup'));
    const stale = join(local, 'nightly', '.db.dump.gz.0123456789abcdef.partial');
    const fresh = join(local, 'nightly', '.db.dump.gz.fedcba9876543210.partial');
    await writeFile(stale, 'half a backup');
    await writeFile(fresh, 'a put in flight');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    const listed: string[] = [];
    for await (const entry of ftp.list('')) listed.push(entry.key);
    expect(listed).toEqual(['nightly/db.dump.gz']);
    expect((await readdir(join(local, 'nightly'))).sort()).toEqual(['.db.dump.gz.fedcba9876543210.partial', 'db.dump.gz']);
  });

  it('removes emptied folders on delete, never the root, and keeps a folder named by the key', async () => {
    const ftp = storage(plainConfig(state, root));
    await ftp.put('x/y/z/file.bin', text('z'));
    await ftp.put('x/keep.bin', text('k'));
    await ftp.delete('x/y/z/file.bin');
    expect(await entriesBelow(local)).toEqual(['x', 'x/keep.bin']);
    await ftp.delete('x');
    expect(await entriesBelow(local)).toEqual(['x', 'x/keep.bin']);
    await ftp.delete('x/keep.bin');
    expect(await readdir(local)).toEqual([]);
  });
});
