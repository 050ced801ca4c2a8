import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, listChildProcesses, readAll, waitForNoNewChildren } from '@holdfast/testkit';
import definition from '../src/index.js';
import { daemonConfig, folderOf, removeCreated, rsyncd, sshConfig, sshd, track } from './server.js';

const MiB = 1024 * 1024;
const opened: StorageAdapter[] = [];

async function storage(config: Record<string, unknown>, context: Partial<AdapterContext> = {}): Promise<StorageAdapter> {
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

function abortAfter(controller: AbortController, threshold: number, onChunk?: () => Promise<void>): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen >= threshold && !controller.signal.aborted) {
        void (onChunk?.() ?? Promise.resolve()).then(() => {
          controller.abort();
          callback(null, chunk);
        });
        return;
      }
      callback(null, chunk);
    },
  });
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeCreated();
});

describe('storage-rsync over SSH', () => {
  it('a wrong password fails check() naming the authentication, and put with AUTH, never echoing it', async () => {
    const config = await sshConfig(await sshd());
    const wrong = await storage({ ...config, password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-rsync\] .*authentication/i);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    const error = await errorOf(wrong.put('x.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(await readdir(String(config.root))).toEqual([]);
  });

  it('an unknown host and a missing root fail check() naming the cause; listing a missing root throws', async () => {
    const config = await sshConfig(await sshd());
    const unknown = await (await storage({ ...config, host: 'no-such-host.invalid' })).check();
    expect(unknown).toMatchObject({ ok: false, message: expect.stringContaining('no-such-host.invalid') });
    expect(unknown.message).toMatch(/ENOTFOUND|getaddrinfo/);
    const missing = await storage({ ...config, root: `${String(config.root)}/not-there` });
    expect(await missing.check()).toMatchObject({ ok: false, message: expect.stringContaining('not-there on 127.0.0.1:2222 does not exist') });
    const error = await errorOf((async () => {
      for await (const _entry of missing.list('a/')) return;
    })());
    expect(error.code).toBe('NOT_FOUND');
  });

  it('logs in with the private key, stores 0600 files owned by the login, and reads ranges', async () => {
    const state = await sshd();
    const { password: _unused, ...config } = await sshConfig(state);
    const rsync = await storage({ ...config, privateKey: await readFile(state.keyPath, 'utf8'), hostKeySha256: state.hostKeySha256 });
    expect(await rsync.check()).toMatchObject({ ok: true, message: expect.stringMatching(/is a writable folder \(rsync +version 3/) });
    await rsync.put('db/dump.sql', text('0123456789'));
    const file = join(String(config.root), 'db', 'dump.sql');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(file)).uid).toBe((await stat(state.home)).uid);
    expect((await readAll(await rsync.get('db/dump.sql', { range: { start: 3, end: 5 } }))).toString()).toBe('345');
  });

  it('takes the login from the ssh credential profile, config fields winning', async () => {
    const state = await sshd();
    const { username: _unused, password: _alsoUnused, ...config } = await sshConfig(state);
    const fromProfile = await storage(config, { credentials: { ssh: { username: state.user, password: state.password } } });
    expect((await fromProfile.check()).ok).toBe(true);
    const configWins = await storage({ ...config, password: 'wrong-password' }, { credentials: { ssh: { username: state.user, password: state.password } } });
    expect((await configWins.check()).ok).toBe(false);
  });

  it('a root the login cannot write fails check() and put with AUTH, naming the cause', async () => {
    const config = await sshConfig(await sshd());
    const locked = join(String(config.root), 'locked');
    await mkdir(locked, { mode: 0o755 });
    const rsync = await storage({ ...config, root: locked });
    expect(await rsync.check()).toMatchObject({ ok: false, message: expect.stringContaining('locked on 127.0.0.1:2222 is not writable by the login') });
    const error = await errorOf(rsync.put('sub/x.bin', text('never')));
    expect(error).toMatchObject({ code: 'AUTH', message: expect.stringContaining('Permission denied') });
    expect(await readdir(locked)).toEqual([]);
  });

  it('an aborted put keeps the old object and leaves no temp file on the server', async () => {
    const config = await sshConfig(await sshd());
    const rsync = await storage(config);
    await rsync.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    const error = await errorOf(rsync.put('keep/existing.bin', deterministicStream(32 * MiB).pipe(abortAfter(controller, 2 * MiB)), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(await readdir(join(String(config.root), 'keep'))).toEqual(['existing.bin']);
    expect((await readAll(await rsync.get('keep/existing.bin'))).toString()).toBe('old');
  });
});

describe('storage-rsync on an rsync daemon', () => {
  it('a wrong password fails check() with "auth failed", put with AUTH; the password is never on a command line', async () => {
    const config = await daemonConfig(await rsyncd());
    const wrong = await storage({ ...config, password: 'Wr0ng-S3cret-99' });
    const health = await wrong.check();
    expect(health).toMatchObject({ ok: false, message: expect.stringContaining('@ERROR: auth failed on module backup') });
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    expect((await errorOf(wrong.put('x.txt', text('never')))).code).toBe('AUTH');
    // A wrapper first on PATH records each rsync command line, and whether RSYNC_PASSWORD was set, then runs rsync.
    const wrapperDir = await mkdtemp(join(tmpdir(), 'holdfast-rsync-test-bin-'));
    const log = join(wrapperDir, 'calls.log');
    await writeFile(join(wrapperDir, 'rsync'), `#!/bin/sh\necho "argv: $* env:\${RSYNC_PASSWORD:+set}" >> '${log}'\nexec /usr/bin/rsync "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${wrapperDir}:${path ?? ''}`;
    try {
      const good = await storage(config);
      await good.put('seen.bin', text('seen'));
      expect((await readAll(await good.get('seen.bin'))).toString()).toBe('seen');
    } finally {
      process.env.PATH = path;
    }
    const calls = (await readFile(log, 'utf8')).trim().split('\n');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) {
      expect(call).toContain('rsync://rsyncuser@127.0.0.1:8873/backup/');
      expect(call).toMatch(/ env:set$/);
      expect(call).not.toContain(String(config.password));
    }
    await rm(wrapperDir, { recursive: true, force: true });
  });

  it('an unknown module, a missing root and an unknown host fail check() naming the cause', async () => {
    const config = await daemonConfig(await rsyncd());
    expect(await (await storage({ ...config, module: 'nomodule' })).check()).toMatchObject({ ok: false, message: expect.stringContaining("Unknown module 'nomodule'") });
    expect(await (await storage({ ...config, root: 'not-there' })).check()).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not-there.*No such file or directory/),
    });
    const unknown = await (await storage({ ...config, host: 'no-such-host.invalid', connectTimeoutSeconds: 5 })).check();
    expect(unknown).toMatchObject({ ok: false, message: expect.stringContaining('no-such-host.invalid') });
    expect((await errorOf(storage({ ...config, module: undefined }).then((s) => s.stat('x')))).code).toBe('CONFIG');
  });

  it('an aborted put leaves no object, no temp file on the daemon, no spool file and no rsync process', async () => {
    const state = await rsyncd();
    const config = await daemonConfig(state);
    const spoolDir = join(await folderOf(config), '..', `${String(config.root)}-spool`);
    await mkdir(track(spoolDir));
    const rsync = await storage({ ...config, spoolDir });
    await rsync.put('keep/existing.bin', text('old'));
    const before = await listChildProcesses();
    const controller = new AbortController();
    const error = await errorOf(rsync.put('keep/existing.bin', deterministicStream(64 * MiB).pipe(abortAfter(controller, 8 * MiB)), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    // Aborted while rsync sends the spooled file to the daemon: the daemon must drop its temp file. A wrapper first
    // on PATH slows rsync down (--bwlimit) and says when it starts, so the abort lands mid-transfer every time.
    const wrapperDir = await mkdtemp(join(tmpdir(), 'holdfast-rsync-test-bin-'));
    const started = join(wrapperDir, 'started');
    await writeFile(join(wrapperDir, 'rsync'), `#!/bin/sh\ntouch '${started}'\nexec /usr/bin/rsync --bwlimit=4M "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${wrapperDir}:${path ?? ''}`;
    const late = new AbortController();
    try {
      const transfer = rsync.put('late/file.bin', deterministicStream(32 * MiB), { signal: late.signal });
      for (let i = 0; i < 600 && !(await stat(started).catch(() => undefined)); i++) await new Promise((r) => setTimeout(r, 50));
      // Let the daemon receive a part and write its temp file before the abort.
      await new Promise((r) => setTimeout(r, 1_000));
      late.abort();
      expect((await errorOf(transfer)).code).toBe('ABORTED');
    } finally {
      process.env.PATH = path;
      await rm(wrapperDir, { recursive: true, force: true });
    }
    expect(await waitForNoNewChildren(before)).toEqual([]);
    const folder = await folderOf(config);
    expect(await readdir(join(folder, 'keep'))).toEqual(['existing.bin']);
    expect(await readdir(join(folder, 'late')).catch(() => [])).toEqual([]);
    expect(await readdir(spoolDir)).toEqual([]);
    expect((await readAll(await rsync.get('keep/existing.bin'))).toString()).toBe('old');
  });

  it('overwrites with same-size content at once (rsync quick check must not skip it), in both modes', async () => {
    for (const config of [await daemonConfig(await rsyncd()), await sshConfig(await sshd())]) {
      const rsync = await storage(config);
      await rsync.put('same.bin', text('aaaa'));
      await rsync.put('same.bin', text('bbbb'));
      expect((await readAll(await rsync.get('same.bin'))).toString()).toBe('bbbb');
    }
  });

  it('deletes exactly one name, even with filter wildcards in it', async () => {
    const config = await daemonConfig(await rsyncd());
    const rsync = await storage(config);
    for (const key of ['d/[x]*?.bin', 'd/ax.bin', 'd/x.bin', 'd/sub/x.bin']) await rsync.put(key, text(key));
    await rsync.delete('d/[x]*?.bin');
    await rsync.delete('d/sub');
    expect((await readdir(join(await folderOf(config), 'd'))).sort()).toEqual(['ax.bin', 'sub', 'x.bin']);
    expect(await readdir(join(await folderOf(config), 'd', 'sub'))).toEqual(['x.bin']);
  });
});
