import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, listChildProcesses, readAll, waitForNoNewChildren } from '@holdfast/testkit';
import definition from '../src/index.js';
import { localConfig, localFolderOf, obscure, removeFolder, webdav, webdavConfig, webdavConfigFile, type WebdavState } from './server.js';

const MiB = 1024 * 1024;
let dav: WebdavState;
const opened: StorageAdapter[] = [];
const configs: Record<string, unknown>[] = [];

function storage(config: Record<string, unknown>): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, config);
  opened.push(instance);
  configs.push(config);
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

function abortAfter(controller: AbortController, threshold: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen >= threshold && !controller.signal.aborted) setImmediate(() => controller.abort());
      callback(null, chunk);
    },
  });
}

async function cmdlineOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
}

beforeAll(async () => {
  dav = await webdav();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await Promise.all(configs.splice(0).map((config) => removeFolder(config).catch(() => undefined)));
});

describe('storage-rclone bad input', () => {
  it('a wrong WebDAV password fails check() naming the 401, and put with AUTH, never echoing the password', async () => {
    const good = await webdavConfig(dav);
    const wrong = storage({ ...good, configFile: webdavConfigFile(dav, 'Wr0ng-S3cret-99') });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-rclone\] check of dav:rclone-[0-9a-f]+ failed: rclone exit code \d+: .*401/);
    expect(health.message).not.toContain('Wr0ng-S3cret-99');
    expect(health.message).not.toContain(obscure('Wr0ng-S3cret-99').slice(0, 12));
    const error = await errorOf(wrong.put('x.txt', Readable.from([Buffer.from('never')])));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain('Wr0ng-S3cret-99');
    expect(await readdir(join(dav.dataDir, String(good.remote).slice('dav:'.length)))).toEqual([]);
  });

  it('an unknown host fails check() saying the name does not resolve', async () => {
    const health = await storage({ remote: ":webdav,url='http://no-such-host.invalid:8081/dav':x", connectTimeoutSeconds: 5 }).check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('no-such-host.invalid');
    expect(health.message).toMatch(/no such host|server misbehaving|lookup/);
  });

  it('a missing folder fails check() saying so, and listing throws NOT_FOUND instead of an empty list', async () => {
    const config = await localConfig();
    const missing = storage({ remote: `${String(config.remote)}/not-there` });
    const health = await missing.check();
    expect(health).toMatchObject({ ok: false, message: expect.stringContaining('not-there failed: the folder does not exist') });
    const error = await errorOf((async () => {
      for await (const _entry of missing.list('some/')) return;
    })());
    expect(error.code).toBe('NOT_FOUND');
    await removeFolder(config);
  });

  it('a named remote missing from the config file fails check() naming the cause', async () => {
    const health = await storage({ remote: 'nosuchremote:backups', configFile: '[other]\ntype = local\n' }).check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain("didn't find section in config file");
  });

  it('refuses flags off the allow-list, bad environment lines and inline secrets when the config is parsed', () => {
    const parse = (config: Record<string, unknown>) => definition.configSchema.safeParse({ remote: 'r:x', ...config }).success;
    expect(parse({ flags: ['--bwlimit=10M', '--s3-chunk-size=64M', '--fast-list'] })).toBe(true);
    for (const flag of ['--config=/etc/passwd', '--password-command=sh', '--rc', '--log-file=/tmp/x', '-v', '--dump=headers']) {
      expect(parse({ flags: [flag] }), flag).toBe(false);
    }
    expect(parse({ environment: 'RCLONE_WEBDAV_PASS=abc\n# comment\n' })).toBe(true);
    expect(parse({ environment: 'RCLONE_CONFIG=/tmp/other.conf' })).toBe(false);
    expect(parse({ environment: 'RCLONE_PASSWORD_COMMAND=sh' })).toBe(false);
    expect(parse({ environment: 'PATH=/tmp' })).toBe(false);
    expect(parse({ remote: ":webdav,url='http://x',pass=abc:path" })).toBe(false);
  });
});

describe('storage-rclone processes and secrets', () => {
  it('an aborted put leaves no object, no temp file and no rclone process, and keeps the old object', async () => {
    const config = await localConfig();
    const local = storage(config);
    await local.put('keep/existing.bin', Readable.from([Buffer.from('old')]));
    const before = await listChildProcesses();
    const controller = new AbortController();
    const body = deterministicStream(64 * MiB).pipe(abortAfter(controller, 2 * MiB));
    const error = await errorOf(local.put('keep/existing.bin', body, { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    const failing = await errorOf(local.put('new/file.bin', deterministicStream(4 * MiB, { failAfterBytes: MiB })));
    expect(failing.code).toBe('TRANSIENT');
    expect(await waitForNoNewChildren(before)).toEqual([]);
    const folder = localFolderOf(config);
    expect(await readdir(join(folder, 'keep'))).toEqual(['existing.bin']);
    expect(await readFile(join(folder, 'keep', 'existing.bin'), 'utf8')).toBe('old');
    expect(await readdir(join(folder, 'new')).catch(() => [])).toEqual([]);
  });

  it('keeps the password out of every rclone command line and removes its 0600 config file on dispose', async () => {
    const marker = `# holdfast-test-${Date.now()}-${Math.random().toString(16).slice(2)}`;
    const config = await webdavConfig(dav);
    config.configFile = `${marker}\n${String(config.configFile)}`;
    const remote = storage(config);
    const before = new Set(await listChildProcesses());
    let seen: string[] = [];
    let passed = 0;
    const body = deterministicStream(16 * MiB).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          passed += chunk.length;
          // By 4 MiB the body is flowing into rclone's stdin, so `rclone rcat` is running.
          if (passed >= 4 * MiB && seen.length === 0) {
            void listChildProcesses().then(async (pids) => {
              seen = await Promise.all(pids.filter((pid) => !before.has(pid)).map(cmdlineOf));
              callback(null, chunk);
            });
            return;
          }
          callback(null, chunk);
        },
      }),
    );
    await remote.put('secret-check.bin', body);
    expect(seen.some((line) => line.includes('rcat'))).toBe(true);
    for (const line of seen) {
      expect(line).not.toContain(dav.password);
      expect(line).not.toMatch(/pass\s*=/);
    }
    const mine: string[] = [];
    for (const name of (await readdir('/tmp')).filter((entry) => entry.startsWith('holdfast-rclone-'))) {
      const file = join('/tmp', name, 'rclone.conf');
      if ((await readFile(file, 'utf8').catch(() => '')).startsWith(marker)) mine.push(file);
    }
    expect(mine).toHaveLength(1);
    expect((await stat(mine[0]!)).mode & 0o777).toBe(0o600);
    expect((await stat(join(mine[0]!, '..'))).mode & 0o777).toBe(0o700);
    await remote.dispose?.();
    await expect(stat(mine[0]!)).rejects.toThrow(/ENOENT/);
  });

  it('overwrites with same-size content at once (the move must not be skipped as "unchanged"), local and WebDAV', async () => {
    for (const config of [await localConfig(), await webdavConfig(dav)]) {
      const remote = storage(config);
      await remote.put('same.bin', Readable.from([Buffer.from('aaaa')]));
      await remote.put('same.bin', Readable.from([Buffer.from('bbbb')]));
      expect((await readAll(await remote.get('same.bin'))).toString(), String(config.remote)).toBe('bbbb');
    }
  });

  it('stops rclone when a reader abandons a download midway', async () => {
    const config = await localConfig();
    await writeFile(join(localFolderOf(config), 'big.bin'), Buffer.alloc(32 * MiB, 7));
    const local = storage(config);
    const before = await listChildProcesses();
    const stream = await local.get('big.bin');
    const first = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
    expect(first.length).toBeGreaterThan(0);
    stream.destroy();
    expect(await waitForNoNewChildren(before)).toEqual([]);
    expect((await readAll(await local.get('big.bin', { range: { start: MiB, end: MiB + 9 } }))).equals(Buffer.alloc(10, 7))).toBe(true);
  });
});
