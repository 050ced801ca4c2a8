import { access, chmod, mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SCRATCH_FOLDER, scratchTag } from '../../test-restore/scratch-targets.js';

// The scratch of a point-in-time test restore: a throwaway folder below the job's testRestore.target.path holding the
// restored cluster (`cluster/`) and, while it replays, the WAL beside it (`.cluster.wal/`, written by the source). The
// restored server is left running on a free local port for the checks and stopped here; the folder is removed with
// everything in it.

/** Name of the restored data directory inside the scratch folder. */
const CLUSTER = 'cluster';
/** How long a fast shutdown may take before the server is stopped harder. */
const FAST_STOP_MS = 30_000;
const IMMEDIATE_STOP_MS = 10_000;

/** A point-in-time scratch folder. */
export interface PointScratch {
  /** The scratch folder (named after the execution, so leftovers of crashed runs can be recognised). */
  folder: string;
  /** Where the source builds the restored data directory (absent until the restore creates it). */
  dataDir: string;
  label: string;
  /** Stops a restored server still running in the scratch and removes the folder; true once it is verifiably gone. */
  drop(): Promise<boolean>;
}

/**
 * Creates the scratch folder below `parent`. The restored server runs as the `postgres` system user when Holdfast is
 * root, so the folder lets others traverse it (0711: enter, not list); the data directory inside is 0700 as
 * PostgreSQL requires.
 */
export async function createPointScratch(parent: string, executionId: string): Promise<PointScratch> {
  await mkdir(parent, { recursive: true });
  const folder = await mkdtemp(join(parent, `holdfast-test-restore-${scratchTag(executionId)}-`));
  await chmod(folder, 0o711);
  const dataDir = join(folder, CLUSTER);
  return { folder, dataDir, label: `folder ${folder}`, drop: () => dropPointScratch(folder) };
}

async function dropPointScratch(folder: string): Promise<boolean> {
  await stopServerIn(join(folder, CLUSTER));
  await rm(folder, { recursive: true, force: true });
  return access(folder).then(
    () => false,
    () => true,
  );
}

/** A free TCP port on 127.0.0.1 (the kernel's pick for port 0), for the restored server to listen on. */
export function freeLocalPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/** What a running PostgreSQL server writes about itself in `postmaster.pid`: its process and its socket folder. */
interface PostmasterRecord {
  pid: number;
  socketDir: string | null;
}

async function postmasterOf(dataDir: string): Promise<PostmasterRecord | null> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (!text) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 1) return null;
  return { pid, socketDir: lines[4]?.trim() || null };
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else (not a server this process started).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * True when `pid` is the server of `dataDir`: a postmaster's working directory is its data directory. A stale
 * `postmaster.pid` (a server that died) may name a pid reused by an unrelated process, which must never be signalled.
 * Without /proc (not Linux) the pid is trusted.
 */
async function isServerOf(pid: number, dataDir: string): Promise<boolean> {
  const hasProc = await access('/proc/self').then(
    () => true,
    () => false,
  );
  if (!hasProc) return isAlive(pid);
  const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => null);
  return cwd !== null && resolve(cwd) === resolve(dataDir);
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await delay(100);
  }
  return !isAlive(pid);
}

/**
 * Stops the PostgreSQL server running on `dataDir`, if any, by signalling its postmaster as `pg_ctl stop` does
 * (SIGINT: fast shutdown; then SIGQUIT: immediate; then SIGKILL): the engine has no PostgreSQL tools of its own, and
 * the server's `postmaster.pid` names its process. The restore's private socket folder (`holdfast-pitr-*` in the temp
 * folder, named on line 5 of `postmaster.pid`) is removed after. Never throws.
 */
export async function stopServerIn(dataDir: string): Promise<void> {
  const record = await postmasterOf(dataDir);
  if (!record) return;
  if (await isServerOf(record.pid, dataDir)) {
    for (const [signal, waitMs] of [['SIGINT', FAST_STOP_MS], ['SIGQUIT', IMMEDIATE_STOP_MS], ['SIGKILL', IMMEDIATE_STOP_MS]] as const) {
      try {
        process.kill(record.pid, signal);
      } catch {
        break; // already gone
      }
      if (await waitForExit(record.pid, waitMs)) break;
    }
  }
  const socketDir = record.socketDir;
  if (socketDir && basename(socketDir).startsWith('holdfast-pitr-') && resolve(dirname(socketDir)) === resolve(tmpdir())) {
    await rm(socketDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Removes point-in-time scratch folders below `parent` that test restores interrupted by a crash left (their
 * execution is in this installation's table and has ended), stopping a restored server still running in one first.
 * A folder in use, or one of another installation sharing the folder, is never touched. Resolves what was removed.
 */
export async function sweepPointLeftovers(parent: string, tagEnded: (tag: string) => Promise<boolean>): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const tag = SCRATCH_FOLDER.exec(name)?.[1];
    if (!tag || !(await tagEnded(tag))) continue;
    const folder = join(parent, name);
    await stopServerIn(join(folder, CLUSTER));
    await rm(folder, { recursive: true, force: true });
    removed.push(`removed folder ${folder} left by an interrupted test restore`);
  }
  return removed;
}
