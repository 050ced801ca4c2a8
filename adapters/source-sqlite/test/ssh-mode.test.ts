import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import { listChildProcesses, waitFor, waitForNoNewChildren } from '@holdfast/testkit';
import { sshdState, type SshdState } from '@holdfast/tooling/harness/sshd';
import definition from '../src/index.js';
import { contents, createDatabase, query } from './helpers.js';

// SSH mode against the real OpenSSH sshd on 127.0.0.1:2222: the files live in the home of its user `sshtest`, who
// runs sqlite3 there; "remote" is this machine seen through sshd.
let sshd: SshdState;
let dir: string;
let staging: string;
let uid: number;

function sshSource(overrides: Record<string, unknown> = {}, ssh: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, {
    path: join(dir, 'missing.sqlite'),
    tempDirectory: staging,
    ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256, ...ssh },
    sshPrivateKey: readFileSync(sshd.keyPath, 'utf8'),
    ...overrides,
  });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk: Buffer, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

/** A database owned by sshtest (WAL side files must be too, so sshtest's readers can open them). */
function ownedDatabase(name: string, rows: number): string {
  const file = join(dir, name);
  createDatabase(file, rows);
  chownSync(file, uid, uid);
  return file;
}

/** sshtest's processes whose command line or open files mention `needle`. */
function remoteUsers(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (!readFileSync(`/proc/${pid}/status`, 'utf8').includes(`\nUid:\t${uid}\t`)) continue;
      const links = readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`));
      const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (line.includes(needle) || links.some((link) => link.includes(needle))) found.push(`${pid} ${line}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** A long-running sqlite3 CLI, as sshtest, inserting a row every few milliseconds until stopped. */
function startWriter(file: string): { stop: () => Promise<void> } {
  const writer = spawn('runuser', ['-u', sshd.user, '--', 'sqlite3', file], { stdio: ['pipe', 'ignore', 'ignore'] });
  writer.stdin.write('.timeout 20000\n');
  const timer = setInterval(() => writer.stdin.write("INSERT INTO items (name, payload, note) VALUES ('during', randomblob(300), 'w');\n"), 2);
  return {
    stop: async () => {
      clearInterval(timer);
      if (writer.exitCode !== null) return;
      writer.stdin.end('.quit\n');
      await new Promise((resolve) => writer.once('close', resolve));
    },
  };
}

const maxId = (file: string) => query<{ n: number }>(file, 'SELECT max(id) AS n FROM items')[0]!.n;

beforeAll(() => {
  sshd = sshdState();
  uid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((line) => line.startsWith(`${sshd.user}:`))!.split(':')[2]);
  dir = join(sshd.home, `hf-sqlite-ssh-${randomBytes(4).toString('hex')}`);
  staging = join(dir, 'staging');
  mkdirSync(staging, { recursive: true });
  chownSync(dir, uid, uid);
  chownSync(staging, uid, uid);
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('source-sqlite in SSH mode (real sshd on 127.0.0.1:2222)', () => {
  it("backs up a file named with a space, quote, - and . over SSH while sshtest writes to it; the restore over SSH holds every row", async () => {
    const file = ownedDatabase("it's a-b.c.sqlite", 40_000);
    const adapter = sshSource({ path: file, sshPrivateKey: undefined, sshPassword: sshd.password });
    const health = await adapter.check();
    expect(health).toMatchObject({ ok: true });
    expect(health.message).toContain(`reads ${file} on 127.0.0.1 over SSH`);
    const writer = startWriter(file);
    try {
      expect(await waitFor(() => maxId(file) > 40_000)).toBe(true);
      const committedBefore = maxId(file);
      const dump = await adapter.dump({ databases: [file], signal: new AbortController().signal });
      const bytes = await collect(dump.stream);
      expect((await dump.done).bytes).toBe(bytes.length);
      expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
      await writer.stop();
      const writtenAfter = maxId(file);
      expect(writtenAfter).toBeGreaterThan(committedBefore);

      const target = join(dir, "restored it's.sqlite");
      for (let round = 0; round < 2; round++) {
        // The second round replaces the file the first one wrote (and removes <target>.previous afterwards).
        const result = await adapter.restore(Readable.from([bytes]), { target: { path: target }, signal: new AbortController().signal });
        expect(result.warnings).toEqual([]);
      }
      expect(readdirSync(dir).filter((name) => name.startsWith('restored'))).toEqual(["restored it's.sqlite"]);
      const restored = query<{ n: number; c: number }>(target, 'SELECT max(id) AS n, count(*) AS c FROM items')[0]!;
      expect(restored.n).toBeGreaterThanOrEqual(committedBefore);
      expect(restored.c).toBe(restored.n);
      expect(restored.n).toBeLessThanOrEqual(writtenAfter);
      expect(contents(target, `WHERE id <= ${restored.n}`)).toEqual(contents(file, `WHERE id <= ${restored.n}`));
    } finally {
      await writer.stop();
    }
    expect(readdirSync(staging)).toEqual([]);
  });

  it('a missing file rejects the dump with NOT_FOUND; a restore that is not SQLite leaves the target untouched', async () => {
    const missing = await sshSource().dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(missing) && missing.code).toBe('NOT_FOUND');
    expect((missing as Error).message).toMatch(/missing\.sqlite does not exist/);
    const file = ownedDatabase('keep.sqlite', 10);
    const refused = await sshSource({ path: file }).restore(Readable.from([Buffer.from('not a database at all, just text')]), { target: {}, signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(refused) && refused.code).toBe('CONFIG');
    expect((refused as Error).message).toMatch(/not an SQLite database file/);
    expect(query<{ c: number }>(file, 'SELECT count(*) AS c FROM items')[0]!.c).toBe(10);
    expect(readdirSync(dir).filter((name) => name.includes('holdfast-restore'))).toEqual([]);
  });

  it('sqlite3 missing on the SSH host rejects the dump with CONFIG naming it', async () => {
    const file = ownedDatabase('nocli.sqlite', 10);
    const error = await sshSource({ path: file, binDirectory: '/nonexistent/holdfast-bin' }).dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/sqlite3 was not found on 127\.0\.0\.1/);
  });

  it('a wrong SSH password fails the check naming SSH authentication, without the secret', async () => {
    const health = await sshSource({ sshPrivateKey: undefined, sshPassword: 'Wrong-Ssh-Pass-77' }).check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH authentication failed: login to 127\.0\.0\.1:2222 as sshtest failed/);
    expect(health.message).not.toContain('Wrong-Ssh-Pass-77');
  });

  it('a wrong host key pin is refused naming the mismatch', async () => {
    const adapter = sshSource({}, { hostKeySha256: `SHA256:${'C'.repeat(43)}` });
    const health = await adapter.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/SSH host key mismatch: host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:C{43}/);
    const error = await adapter.dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
  });

  it('a lock beyond the busy timeout fails with TRANSIENT; aborting a backup that waits on it kills the remote sqlite3 and removes its staging', async () => {
    const file = join(dir, 'locked.sqlite');
    createDatabase(file, 100, 'delete');
    chownSync(file, uid, uid);
    // sshtest holds an exclusive lock, so the remote backup waits on it: a dump that is certainly still running.
    const locker = spawn('runuser', ['-u', sshd.user, '--', 'sqlite3', file], { stdio: ['pipe', 'ignore', 'ignore'] });
    // With a busy timeout: the probe below reads the file, and a BEGIN EXCLUSIVE that met its shared lock failed at
    // once without one, leaving no lock at all (the probe then waited in vain; seen on CI and locally).
    locker.stdin.write('.timeout 10000\nBEGIN EXCLUSIVE;\n');
    try {
      const isLockSeen = await waitFor(() => spawnSync('sqlite3', [file, 'SELECT 1 FROM items LIMIT 1'], { encoding: 'utf8' }).stderr.includes('locked'), 30_000);
      expect(isLockSeen, `the locking sqlite3 ${locker.exitCode === null ? 'still runs' : `exited with ${locker.exitCode}`}`).toBe(true);
      const locked = await sshSource({ path: file, busyTimeoutSeconds: 1 }).dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
      expect(isAdapterError(locked) && locked.code).toBe('TRANSIENT');
      expect((locked as Error).message).toMatch(/database is locked/);
      expect(await waitFor(() => readdirSync(staging).length === 0)).toBe(true);
      const controller = new AbortController();
      const pending = sshSource({ path: file, busyTimeoutSeconds: 60 }).dump({ databases: [], signal: controller.signal });
      pending.catch(() => undefined);
      // The remote sqlite3 shows in ps a moment before it has created its staging copy; wait for both.
      expect(await waitFor(() => remoteUsers(staging).some((line) => line.includes('.backup')) && readdirSync(staging).length === 1, 20_000)).toBe(true);
      controller.abort();
      const error = await pending.catch((e: unknown) => e);
      expect(isAdapterError(error) && error.code).toBe('ABORTED');
      expect(await waitFor(() => remoteUsers(staging).length === 0 && readdirSync(staging).length === 0)).toBe(true);
    } finally {
      locker.kill('SIGKILL');
    }
  }, 120_000);

  it('aborting mid-dump leaves no remote process on the file or its copy, no staging copy and no local child', async () => {
    const file = ownedDatabase('abort.sqlite', 60_000);
    const before = await listChildProcesses();
    const controller = new AbortController();
    const dump = await sshSource({ path: file }).dump({ databases: [], signal: controller.signal });
    const drained = pipeline(dump.stream, new PassThrough({ highWaterMark: 1024 }), new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => setTimeout(cb, 5) }));
    // The remote `cat` streams the staged copy (already unlinked, still open): it is what must die.
    expect(await waitFor(() => remoteUsers(staging).length > 0)).toBe(true);
    controller.abort();
    await expect(drained).rejects.toBeTruthy();
    await expect(dump.done).rejects.toSatisfy((e: unknown) => isAdapterError(e) && e.code === 'ABORTED');
    expect(await waitFor(() => remoteUsers(staging).length === 0 && remoteUsers(file).length === 0)).toBe(true);
    expect(readdirSync(staging)).toEqual([]);
    expect(await waitForNoNewChildren(before)).toEqual([]);
  });
});
