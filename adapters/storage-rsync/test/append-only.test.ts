// Issue 45 item 2 (docs/immutability.md, "Destinations without object immutability"): an rsync daemon module with
// `refuse options = delete*` as an append-only target. This suite starts its own daemon (the shared one of
// tooling/test-services must keep allowing deletes) on a free port of 127.0.0.1 and checks what Holdfast gets: puts
// work, deletes fail naming the refusal, and overwrites still work (the option does not stop them).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';

let dir: string;
let daemon: ChildProcess;
let port: number;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: chosen } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return chosen;
}

async function waitForModules(): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const listed = spawnSync('rsync', ['--contimeout=2', `rsync://127.0.0.1:${port}/`], { encoding: 'utf8', timeout: 5000 });
    if (listed.status === 0 && listed.stdout.includes('appendonly')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the append-only rsync daemon on port ${port} did not start`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'holdfast-rsync-append-only-'));
  port = await freePort();
  await mkdir(join(dir, 'data'));
  await writeFile(join(dir, 'secrets'), 'writer:writer-pass\n', { mode: 0o600 });
  await writeFile(
    join(dir, 'rsyncd.conf'),
    [
      'address = 127.0.0.1',
      `port = ${port}`,
      'use chroot = no',
      'uid = root',
      'gid = root',
      '[appendonly]',
      `  path = ${join(dir, 'data')}`,
      '  read only = no',
      '  auth users = writer',
      `  secrets file = ${join(dir, 'secrets')}`,
      '  refuse options = delete*',
      '',
    ].join('\n'),
  );
  daemon = spawn('rsync', ['--daemon', '--no-detach', `--config=${join(dir, 'rsyncd.conf')}`], { stdio: 'ignore' });
  await waitForModules();
});

afterAll(async () => {
  daemon?.kill();
  await rm(dir, { recursive: true, force: true });
});

describe('rsync daemon module with "refuse options = delete*" (append-only target)', () => {
  it('stores backups, refuses every delete naming the refusal, and still lets an overwrite through', async () => {
    const rsync = createAdapterInstance<StorageAdapter>(definition, { mode: 'daemon', host: '127.0.0.1', port, module: 'appendonly', username: 'writer', password: 'writer-pass', root: '' });
    await rsync.put('db/x.dump', Readable.from([Buffer.from('backup')]));
    await rsync.put('db/x.dump.meta.json', Readable.from([Buffer.from('{"v":1}')]));

    const refused = await rsync.delete('db/x.dump').then(() => undefined, (error: unknown) => error);
    expect(isAdapterError(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/cannot delete "db\/x\.dump": rsync exit code 4: .*configured to refuse --delete/);
    expect(await readFile(join(dir, 'data', 'db', 'x.dump'), 'utf8')).toBe('backup');

    // The limit of this pattern: rsync replaces an existing file, and no daemon option refuses that.
    await rsync.put('db/x.dump', Readable.from([Buffer.from('overwritten')]));
    expect(await readFile(join(dir, 'data', 'db', 'x.dump'), 'utf8')).toBe('overwritten');
    await rsync.dispose?.();
  }, 30_000);
});
