import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshRoot, removeRoot, samba, smbConfig, type SambaState } from './server.js';

let state: SambaState;
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

/** Command lines of every running smbclient, read from /proc. */
async function smbclientCommandLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.startsWith('smbclient')) lines.push(cmdline.split('\u0000').join(' '));
  }
  return lines;
}

const text = (value: string) => Readable.from([Buffer.from(value)]);

beforeAll(async () => {
  state = await samba();
});
beforeEach(async () => {
  ({ path: root, local } = await freshRoot(state));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeRoot(state, root);
});

describe('storage-smb connection failures', () => {
  it('a wrong password fails check() with AUTH naming the cause, never echoing it, and writes nothing', async () => {
    const wrong = storage({ ...smbConfig(state, root), password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-smb\] check of .* failed: session setup failed: NT_STATUS_LOGON_FAILURE \(wrong username or password\)$/);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    const error = await errorOf(wrong.put('x/y.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain('Wr0ng-S3cret-99');
    expect(await readdir(local)).toEqual([]);
  });

  it('an unreachable server (closed loopback port) fails check() and put with TRANSIENT', async () => {
    const down = storage({ ...smbConfig(state, root), port: await closedPort() });
    const health = await down.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('NT_STATUS_CONNECTION_REFUSED');
    expect((await errorOf(down.put('x.txt', text('never')))).code).toBe('TRANSIENT');
  });

  it('a missing share fails check() with NOT_FOUND naming the share', async () => {
    const noShare = storage({ ...smbConfig(state, root), share: 'no-such-share' });
    const health = await noShare.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('NT_STATUS_BAD_NETWORK_NAME (the share does not exist on this server)');
    expect((await errorOf(noShare.put('x.txt', text('never')))).code).toBe('NOT_FOUND');
  });

  it('a missing folder fails check() with NOT_FOUND, and list and put throw instead of creating it', async () => {
    const missing = storage(smbConfig(state, `${root}/not-there`));
    const health = await missing.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain(`the folder //${state.host}:${state.port}/${state.share}/${root}/not-there does not exist`);
    const listing = await errorOf((async () => {
      for await (const _entry of missing.list('')) return;
    })());
    expect(listing.code).toBe('NOT_FOUND');
    expect((await errorOf(missing.put('a/b.txt', text('never')))).code).toBe('NOT_FOUND');
    expect(await readdir(local)).toEqual([]);
  });

  it('a read-only share fails check() with AUTH, and a successful check leaves nothing behind', async () => {
    const readonly = storage({ ...smbConfig(state, ''), share: state.readonlyShare });
    const health = await readonly.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('NT_STATUS_ACCESS_DENIED');
    const good = storage(smbConfig(state, root));
    expect(await good.check()).toMatchObject({ ok: true, message: `//${state.host}:${state.port}/${state.share}/${root} is a writable SMB folder` });
    expect(await readdir(local)).toEqual([]);
    expect((await storage(smbConfig(state, '')).check()).ok).toBe(true);
    expect((await readdir(state.sharePath)).filter((name) => name.startsWith('.holdfast-check'))).toEqual([]);
  });
});

describe('storage-smb transfers', () => {
  it('an aborted put leaves neither the object nor a temp file, and a failed put removes the folders it made', async () => {
    const smb = storage(smbConfig(state, root));
    await smb.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    let seen = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 1024 * 1024 && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await errorOf(smb.put('keep/existing.bin', deterministicStream(32 * 1024 * 1024).pipe(tap), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(await entriesBelow(local)).toEqual(['keep', 'keep/existing.bin']);
    expect(await readFile(join(local, 'keep', 'existing.bin'), 'utf8')).toBe('old');
    const broken = await errorOf(smb.put('new/dir/file.bin', deterministicStream(1_000_000, { failAfterBytes: 200_000 })));
    expect(broken.code).toBe('TRANSIENT');
    expect(await entriesBelow(local)).toEqual(['keep', 'keep/existing.bin']);
  });

  it('hands the password to smbclient through its environment, never on its command line', async () => {
    const smb = storage(smbConfig(state, root));
    const body = new PassThrough();
    const putting = smb.put('secret/check.bin', body);
    body.write(Buffer.alloc(1000, 1));
    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length === 0; i++) {
      lines = (await smbclientCommandLines()).filter((line) => line.includes('secret/'));
      if (lines.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    body.end();
    await putting;
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(state.password);
    expect(await readFile(join(local, 'secret', 'check.bin'))).toEqual(Buffer.alloc(1000, 1));
  });

  it('refuses keys smbclient or SMB cannot carry (; " : * ?), writing nothing', async () => {
    const smb = storage(smbConfig(state, root));
    for (const key of ['a;del x', 'say "hi"', 'c:d', 'star*', 'what?']) {
      expect((await errorOf(smb.put(key, text('never')))).code).toBe('CONFIG');
    }
    expect(await readdir(local)).toEqual([]);
  });

  it('sweeps a temp file a crash left a day ago as a listing passes it, and keeps a fresh one', async () => {
    const smb = storage(smbConfig(state, root));
    await smb.put('nightly/db.dump.gz', text('whole backup'));
    const stale = join(local, 'nightly', '.db.dump.gz.0123456789abcdef.partial');
    const fresh = join(local, 'nightly', '.db.dump.gz.fedcba9876543210.partial');
    await writeFile(stale, 'half a backup');
    await writeFile(fresh, 'a put in flight');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    const listed: string[] = [];
    for await (const entry of smb.list('')) listed.push(entry.key);
    expect(listed).toEqual(['nightly/db.dump.gz']);
    expect((await readdir(join(local, 'nightly'))).sort()).toEqual(['.db.dump.gz.fedcba9876543210.partial', 'db.dump.gz']);
  });

  it('removes emptied folders on delete, never the root, and keeps a folder named by the key', async () => {
    const smb = storage(smbConfig(state, root));
    await smb.put('x/y/z/file.bin', text('z'));
    await smb.put('x/keep.bin', text('k'));
    await smb.delete('x/y/z/file.bin');
    expect(await entriesBelow(local)).toEqual(['x', 'x/keep.bin']);
    await smb.delete('x');
    expect(await entriesBelow(local)).toEqual(['x', 'x/keep.bin']);
    await smb.delete('x/keep.bin');
    expect(await readdir(local)).toEqual([]);
  });

  it('works with SMB signing and with SMB3 encryption required', async () => {
    for (const protection of ['sign', 'encrypt'] as const) {
      const smb = storage({ ...smbConfig(state, root), protection });
      expect((await smb.check()).ok).toBe(true);
      const body = await readAll(deterministicStream(200_000, { seed: protection }));
      await smb.put(`${protection}/file.bin`, Readable.from([body]));
      expect((await readAll(await smb.get(`${protection}/file.bin`))).equals(body)).toBe(true);
    }
  });

  it('stores exactly the bytes on the share and reads a range from the middle', async () => {
    const smb = storage(smbConfig(state, root));
    const body = await readAll(deterministicStream(300_000, { seed: 'disk' }));
    expect(await smb.put('disk/one.bin', Readable.from([body]))).toEqual({ key: 'disk/one.bin', size: 300_000 });
    expect((await readFile(join(local, 'disk', 'one.bin'))).equals(body)).toBe(true);
    const middle = await readAll(await smb.get('disk/one.bin', { range: { start: 140_000, end: 140_099 } }));
    expect(middle.equals(body.subarray(140_000, 140_100))).toBe(true);
    expect(await smb.put('disk/empty.bin', Readable.from([]))).toEqual({ key: 'disk/empty.bin', size: 0 });
    expect((await readAll(await smb.get('disk/empty.bin'))).length).toBe(0);
    expect((await smb.stat('disk/empty.bin')).size).toBe(0);
  });
});
