import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshRoot, keyConfig, passwordConfig, removeRoot, sshd, type SshdState } from './server.js';

let state: SshdState;
let root: string;
const opened: StorageAdapter[] = [];

function storage(config: Record<string, unknown>, context: Partial<AdapterContext> = {}): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, config, context);
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

const text = (value: string) => Readable.from([Buffer.from(value)]);

beforeAll(async () => {
  state = await sshd();
});
beforeEach(async () => {
  root = await freshRoot(state);
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeRoot(root);
});

describe('storage-sftp authentication', () => {
  it('logs in with the password and stores files the server user owns, mode 0600', async () => {
    const sftp = storage(passwordConfig(state, root));
    expect((await sftp.check()).ok).toBe(true);
    await sftp.put('pw/file.txt', text('by password'));
    expect(await readFile(join(root, 'pw', 'file.txt'), 'utf8')).toBe('by password');
    const info = await stat(join(root, 'pw', 'file.txt'));
    expect(info.mode & 0o777).toBe(0o600);
    expect(info.uid).toBe((await stat(state.home)).uid);
  });

  it('logs in with the ed25519 private key', async () => {
    const sftp = storage(await keyConfig(state, root));
    const health = await sftp.check();
    expect(health).toMatchObject({ ok: true, message: `${root} on ${state.host}:${state.port} is a writable directory` });
    await sftp.put('key/file.txt', text('by key'));
    expect((await readAll(await sftp.get('key/file.txt'))).toString()).toBe('by key');
  });

  it('takes the login from the primary credential profile, with config fields winning', async () => {
    const { username: _unused, password: _alsoUnused, ...withoutLogin } = passwordConfig(state, root);
    const fromProfile = storage(withoutLogin, { credentials: { primary: { username: state.user, password: state.password } } });
    expect((await fromProfile.check()).ok).toBe(true);
    const configWins = storage(passwordConfig(state, root), { credentials: { primary: { username: state.user, password: 'profile-wrong' } } });
    expect((await configWins.check()).ok).toBe(true);
    const profileKey = storage(withoutLogin, {
      credentials: { primary: { username: state.user, privateKey: await readFile(state.keyPath, 'utf8') } },
    });
    expect((await profileKey.check()).ok).toBe(true);
  });

  it('a wrong password fails check() and rejects put with AUTH, never echoing the password', async () => {
    const wrong = storage({ ...passwordConfig(state, root), password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-sftp\] .*authentication/i);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    const error = await errorOf(wrong.put('x.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain('Wr0ng-S3cret-99');
    expect(await readdir(root)).toEqual([]);
  });

  it('accepts the pinned host key and fails with AUTH when the pin does not match', async () => {
    const pinned = storage({ ...passwordConfig(state, root), hostKeySha256: state.hostKeySha256 });
    expect((await pinned.check()).ok).toBe(true);
    const otherKey = `SHA256:${'A'.repeat(43)}`;
    const mismatch = storage({ ...passwordConfig(state, root), hostKeySha256: otherKey });
    const error = await errorOf(mismatch.put('x.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain(`host key of ${state.host}:${state.port} is ${state.hostKeySha256}, not the pinned ${otherKey}`);
    expect((await mismatch.check()).ok).toBe(false);
  });

  it('rejects a config without any password or key, naming what is missing', async () => {
    const { password: _unused, ...noSecret } = passwordConfig(state, root);
    const error = await errorOf(storage(noSecret).put('x.txt', text('never')));
    expect(error).toMatchObject({ code: 'CONFIG', message: '[storage-sftp] no password or private key: set one, or assign a credential profile' });
  });
});

describe('storage-sftp transfers', () => {
  it('an upload aborted midway leaves neither the object nor a temp file on the server', async () => {
    const sftp = storage(passwordConfig(state, root));
    await sftp.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    let seen = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 1024 * 1024 && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await errorOf(
      sftp.put('keep/existing.bin', deterministicStream(32 * 1024 * 1024).pipe(tap), { signal: controller.signal }),
    );
    expect(error.code).toBe('ABORTED');
    expect(await readdir(join(root, 'keep'))).toEqual(['existing.bin']);
    expect(await readFile(join(root, 'keep', 'existing.bin'), 'utf8')).toBe('old');
    const fresh = await errorOf(sftp.put('new/dir/file.bin', deterministicStream(1_000_000, { failAfterBytes: 200_000 })));
    expect(fresh.code).toBe('TRANSIENT');
    expect((await readdir(root)).sort()).toEqual(['keep']);
  });

  it('sweeps a temp file a crash left a day ago as a listing passes it, and keeps a fresh one', async () => {
    const sftp = storage(passwordConfig(state, root));
    await sftp.put('nightly/db.dump.gz', text('whole backup'));
    const stale = join(root, 'nightly', '.db.dump.gz.0123456789abcdef.partial');
    const fresh = join(root, 'nightly', '.db.dump.gz.fedcba9876543210.partial');
    await writeFile(stale, 'half a backup');
    await writeFile(fresh, 'a put in flight');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    const listed: string[] = [];
    for await (const entry of sftp.list('')) listed.push(entry.key);
    expect(listed).toEqual(['nightly/db.dump.gz']);
    expect((await readdir(join(root, 'nightly'))).sort()).toEqual(['.db.dump.gz.fedcba9876543210.partial', 'db.dump.gz']);
  });

  it('reuses one connection across operations and reconnects after dispose', async () => {
    const sftp = storage(passwordConfig(state, root));
    await sftp.put('a.txt', text('a'));
    await sftp.put('b.txt', text('b'));
    expect((await sftp.stat('a.txt')).size).toBe(1);
    await sftp.dispose?.();
    expect((await readAll(await sftp.get('b.txt'))).toString()).toBe('b');
  });

  it('removes emptied folders on delete, never the root, and lists by throwing when the root is missing', async () => {
    const sftp = storage(passwordConfig(state, root));
    await sftp.put('x/y/z/file.bin', text('z'));
    await sftp.put('x/keep.bin', text('k'));
    await sftp.delete('x/y/z/file.bin');
    expect(await readdir(join(root, 'x'))).toEqual(['keep.bin']);
    await sftp.delete('x/keep.bin');
    expect(await readdir(root)).toEqual([]);
    const missing = storage(passwordConfig(state, join(root, 'not-there')));
    const error = await errorOf((async () => {
      for await (const _entry of missing.list('')) return;
    })());
    expect(error.code).toBe('NOT_FOUND');
  });
});

describe('storage-sftp crash leftovers (regression, issue 10.8)', () => {
  it('removeIncomplete removes the temp files of interrupted puts of one key, and nothing else', async () => {
    const sftp = storage(passwordConfig(state, root));
    await sftp.put('daily/a.dump', text('kept'));
    await sftp.put('daily/b.dump', text('other'));
    const leftovers = ['.a.dump.0123456789abcdef.partial', '.a.dump.fedcba9876543210.partial'];
    for (const name of leftovers) await writeFile(join(root, 'daily', name), 'cut off');
    await writeFile(join(root, 'daily', '.b.dump.0123456789abcdef.partial'), 'another key');

    await sftp.removeIncomplete!('daily/a.dump');
    await sftp.removeIncomplete!('missing/none.dump');

    expect((await readdir(join(root, 'daily'))).sort()).toEqual(['.b.dump.0123456789abcdef.partial', 'a.dump', 'b.dump']);
    expect((await readAll(await sftp.get('daily/a.dump'))).toString()).toBe('kept');
  });
});
