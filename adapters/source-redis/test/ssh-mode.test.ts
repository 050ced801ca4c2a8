import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import { allCommandLines, listChildProcesses, ownConnectionsTo, waitFor, waitForNoNewChildren } from '@holdfast/testkit';
import { remoteToolProcesses, sshdState, type SshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { compareSnapshots, flush, seed, server, snapshot, snapshotServedFromRdb, withDb } from './helpers.js';

// SSH mode against the real OpenSSH sshd on 127.0.0.1:2222: logical mode talks to the local Redis through an SSH port
// forward, rdb mode runs redis-cli as `sshtest`; "remote" is this machine seen through sshd. Indexes 7 and 8 are this
// file's (the other files use 10-15).
const SEEDED = 7;
const TARGET = 8;
const USER = `hf_redis_ssh_${randomBytes(4).toString('hex')}`;
const PASSWORD = `Ssh-Pw-${randomBytes(8).toString('hex')}`;
let sshd: SshdState;

function sshSource(overrides: Record<string, unknown> = {}, ssh: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, {
    ...server,
    database: SEEDED,
    ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256, ...ssh },
    sshPassword: sshd.password,
    ...overrides,
  });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

const signal = () => new AbortController().signal;

beforeAll(async () => {
  sshd = sshdState();
  await flush(SEEDED, TARGET);
  await seed(SEEDED);
  await withDb(SEEDED, (redis) => redis.call('ACL', 'SETUSER', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all'));
});

afterAll(async () => {
  await flush(SEEDED, TARGET);
  await withDb(SEEDED, (redis) => redis.call('ACL', 'DELUSER', USER));
});

describe('source-redis in SSH mode (real sshd on 127.0.0.1:2222)', () => {
  it('logical mode checks, dumps and restores through an SSH port forward, key by key', async () => {
    const adapter = sshSource({ sshPassword: undefined, sshPrivateKey: await readFile(sshd.keyPath, 'utf8') });
    const health = await adapter.check();
    expect(health).toMatchObject({ ok: true });
    expect(health.message).toMatch(/over SSH via 127\.0\.0\.1:2222$/);
    expect(await adapter.listDatabases()).toContain(String(SEEDED));
    const dump = await adapter.dump({ databases: [String(SEEDED)], signal: signal() });
    expect(ownConnectionsTo(sshd.port)).toBeGreaterThan(0);
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);
    await adapter.restore(Readable.from([bytes]), { target: { database: String(TARGET) }, signal: signal() });
    expect(compareSnapshots(await snapshot(TARGET), await snapshot(SEEDED))).toEqual([]);
    // Every forward closed with its client: no SSH connection of this process is left open.
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0)).toBe(true);
  });

  it('rdb mode runs redis-cli on the SSH host with the password in no command line; the RDB checks OK and a server started on it serves every key and TTL', async () => {
    // About 24 MB more than the SSH window, so the unread remote redis-cli is certainly still running.
    await withDb(TARGET, async (redis) => {
      const batch = redis.pipeline();
      for (let i = 0; i < 40_000; i++) batch.set(`bulk:${i}`, randomBytes(600));
      await batch.exec();
    });
    const controller = new AbortController();
    const dump = await sshSource({ mode: 'rdb', username: USER, password: PASSWORD }).dump({ databases: [], signal: controller.signal });
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'redis-cli').length > 0)).toBe(true);
    const lines = allCommandLines();
    expect(lines.some((line) => line.startsWith('redis-cli -h 127.0.0.1 -p 6379') && line.includes(`--user ${USER}`))).toBe(true);
    expect(lines.filter((line) => line.includes(PASSWORD))).toEqual([]);
    const bytes = await collect(dump.stream);
    expect((await dump.done).bytes).toBe(bytes.length);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('REDIS');
    const dir = await mkdtemp(join(tmpdir(), 'hf-redis-ssh-'));
    try {
      await writeFile(join(dir, 'dump.rdb'), bytes);
      expect(execFileSync('redis-check-rdb', [join(dir, 'dump.rdb')], { encoding: 'utf8' })).toMatch(/RDB looks OK/);
      // Key by key, every type with its TTL, as a server started on the file serves them.
      expect(compareSnapshots(await snapshotServedFromRdb(dir, SEEDED), await snapshot(SEEDED))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a wrong SSH password fails the check naming SSH authentication, without the secret', async () => {
    for (const mode of ['logical', 'rdb']) {
      const adapter = sshSource({ mode, sshPassword: 'Wrong-Ssh-Pass-77' });
      const health = await adapter.check();
      expect(health.ok).toBe(false);
      expect(health.message).toMatch(/SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/);
      expect(health.message).not.toContain('Wrong-Ssh-Pass-77');
    }
  });

  it('a wrong host key pin is refused naming the mismatch', async () => {
    const adapter = sshSource({ mode: 'rdb' }, { hostKeySha256: `SHA256:${'D'.repeat(43)}` });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH host key mismatch: host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:D{43}/);
    const error = await adapter.dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
  });

  it('rdb mode with redis-cli missing on the SSH host rejects the dump with CONFIG naming it', async () => {
    const error = await sshSource({ mode: 'rdb', binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/redis-cli was not found in \/nonexistent\/holdfast-bin of 127\.0\.0\.1/);
  });

  it('aborting a logical dump mid-stream rejects done with ABORTED and closes the SSH port forward', async () => {
    const controller = new AbortController();
    const dump = await sshSource().dump({ databases: [String(SEEDED)], signal: controller.signal });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(ownConnectionsTo(sshd.port)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    // Logical mode runs no remote process: what must not survive the cancel is the SSH connection.
    expect(await waitFor(() => ownConnectionsTo(sshd.port) === 0)).toBe(true);
  });

  it('aborting an rdb dump mid-stream leaves no redis-cli on the remote host and no local child', async () => {
    const before = await listChildProcesses();
    const controller = new AbortController();
    const dump = await sshSource({ mode: 'rdb' }).dump({ databases: [], signal: controller.signal });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'redis-cli').length > 0)).toBe(true);
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitFor(() => remoteToolProcesses(sshd.user, 'redis-cli').length === 0)).toBe(true);
    expect(await waitForNoNewChildren(before)).toEqual([]);
  });
});
