// The scratch of a point-in-time test restore: the restored server named by postmaster.pid is stopped (only when
// that pid really is a process working in the data directory), the restore's private socket folder goes with it, and
// leftovers of ended executions are swept while others' folders stay. A `sleep` process stands in for the server.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPointScratch, freeLocalPort, stopServerIn, sweepPointLeftovers } from '../../src/pitr/test-restore/point-scratch.js';
import { recoveryPointCheck } from '../../src/pitr/test-restore/served-copy-checks.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A long sleep working in `cwd`, as a postmaster works in its data directory. */
function fakeServer(cwd: string): ChildProcess {
  const child = spawn('sleep', ['300'], { cwd, stdio: 'ignore' });
  cleanups.push(async () => void child.kill('SIGKILL'));
  return child;
}

const exited = (child: ChildProcess) => new Promise<NodeJS.Signals | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.signalCode) : child.once('exit', (_code, signal) => resolve(signal))));

async function writePid(dataDir: string, pid: number, socketDir: string): Promise<void> {
  await writeFile(join(dataDir, 'postmaster.pid'), `${pid}\n${dataDir}\n1765000000\n5432\n${socketDir}\n127.0.0.1\n  1234   5678\nready   \n`);
}

describe('point-in-time test restore scratch', () => {
  it('stops the process named by postmaster.pid with a fast shutdown and removes the private socket folder', async () => {
    const dataDir = await tempDir('hf-point-scratch-');
    const socketDir = await tempDir('holdfast-pitr-');
    const server = fakeServer(dataDir);
    await writePid(dataDir, server.pid!, socketDir);
    await stopServerIn(dataDir);
    expect(await exited(server)).toBe('SIGINT');
    expect(await stat(socketDir).catch(() => null)).toBeNull();
  });

  it('never signals a process that does not work in the data directory (a stale postmaster.pid), nor removes other folders', async () => {
    const dataDir = await tempDir('hf-point-scratch-');
    const elsewhere = await tempDir('hf-point-elsewhere-');
    const stranger = fakeServer(elsewhere);
    const notOurs = await tempDir('not-a-restore-');
    await writePid(dataDir, stranger.pid!, notOurs);
    await stopServerIn(dataDir);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stranger.exitCode).toBeNull();
    expect(stranger.signalCode).toBeNull();
    expect(await stat(notOurs).catch(() => null)).not.toBeNull();
  });

  it('creates a folder others can traverse, and drop stops its server and removes it', async () => {
    const parent = await tempDir('hf-point-parent-');
    const scratch = await createPointScratch(parent, '0123abcd-4567-89ef-0123-456789abcdef');
    expect(scratch.folder).toMatch(/holdfast-test-restore-0123abcd4567-/);
    expect((await stat(scratch.folder)).mode & 0o777).toBe(0o711);
    await mkdir(scratch.dataDir, { mode: 0o700 });
    const server = fakeServer(scratch.dataDir);
    await writePid(scratch.dataDir, server.pid!, '/nonexistent/holdfast-pitr-x');
    expect(await scratch.drop()).toBe(true);
    expect(await exited(server)).toBe('SIGINT');
    expect(await readdir(parent)).toEqual([]);
  });

  it('sweeps leftovers of ended executions only', async () => {
    const parent = await tempDir('hf-point-sweep-');
    const ended = await createPointScratch(parent, 'aaaaaaaa-aaaa-0000-0000-000000000000');
    const running = await createPointScratch(parent, 'bbbbbbbb-bbbb-0000-0000-000000000000');
    await mkdir(join(parent, 'somebody-elses-folder'));
    await mkdir(ended.dataDir);
    const server = fakeServer(ended.dataDir);
    await writePid(ended.dataDir, server.pid!, '/nonexistent');
    const removed = await sweepPointLeftovers(parent, async (tag) => tag === 'aaaaaaaaaaaa');
    expect(removed).toEqual([`removed folder ${ended.folder} left by an interrupted test restore`]);
    expect(await exited(server)).toBe('SIGINT');
    expect((await readdir(parent)).sort()).toEqual([running.folder.slice(parent.length + 1), 'somebody-elses-folder'].sort());
  });

  it('finds a free local port', async () => {
    const port = await freeLocalPort();
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65_536);
  });
});

describe('recoveryPointCheck', () => {
  const target = new Date('2026-12-06T10:00:05.000Z');
  it('passes a recovered point at or before the target and says how far before', () => {
    expect(recoveryPointCheck(target, new Date('2026-12-06T10:00:04.750Z'))).toEqual({ name: 'recovery point', ok: true, detail: 'the newest replayed commit (2026-12-06T10:00:04.750Z) is 0.250 s before the target 2026-12-06T10:00:05.000Z' });
    expect(recoveryPointCheck(target, target).ok).toBe(true);
  });
  it('fails a recovered point after the target', () => {
    const check = recoveryPointCheck(target, new Date('2026-12-06T10:00:05.100Z'));
    expect(check.ok).toBe(false);
    expect(check.detail).toContain('AFTER the target');
  });
  it('passes a copy with no replayed transaction and says so', () => {
    expect(recoveryPointCheck(target, null)).toMatchObject({ ok: true, detail: expect.stringContaining('no transaction was replayed') });
  });
});
