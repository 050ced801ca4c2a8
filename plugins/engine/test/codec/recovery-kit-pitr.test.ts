// Issue 43, scope 7: the recovery kit restores a PostgreSQL base backup and its WAL to a point in time without
// Holdfast. Real everything up to the destination: the PITR test cluster (PostgreSQL 15 on 127.0.0.1:5433), the
// physical-mode PostgreSQL source through the engine, a LOCAL destination, a job encrypted with a key profile and
// compressed with ZSTD (Node 20 has no zstd: the kit uses the zstd program), WAL flushed every second. Then, as a
// user without Holdfast would: the destination's files are copied to a scratch folder, the kit is written out, its
// script runs as a plain `node` child process, and the restored data directory is started with Debian's PostgreSQL 15
// as the `postgres` user. Each copy must hold exactly the rows committed at or before its target.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sourcePostgres from '@holdfast/source-postgres';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecoveryKit } from '../../src/codec/recovery-kit.js';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from '../pitr/pitr-server.js';

const run = promisify(execFile);
const SERVICES = '/tmp/holdfast-test-services';
const PG_BIN = '/usr/lib/postgresql/15/bin';
const WRITE_FOR_MS = 10_000;
const COMMIT_EVERY_MS = 100;

const pitr = JSON.parse(await readFile(`${SERVICES}/postgres-pitr/postgres-pitr.json`, 'utf8')) as { host: string; port: number; roles: Record<string, { user: string; password: string }> };
const SUFFIX = randomBytes(4).toString('hex');
const JOB = `kitpitr${SUFFIX}`;
const TABLE = `kit_pitr_${SUFFIX}`;

interface Commit {
  id: number;
  serverAt: number;
  clientAfter: number;
}

interface KitRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const adminClient = () => new pg.Client({ host: `${SERVICES}/postgres-pitr`, port: pitr.port, user: 'postgres', database: 'postgres' });

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `instant` written with a +02:00 offset, as a user east of UTC would type it. */
function withOffset(instant: number): string {
  return new Date(instant + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
}

describe('the recovery kit restores a base backup and its WAL to a point in time without Holdfast (issue 43, scope 7)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let apiKey: string;
  let work: string;
  let destination: string;
  let scratch: string;
  let kitDir: string;
  const jobKey = randomBytes(32);
  const admin = adminClient();
  const started: string[] = [];
  let isServerClosed = false;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, committed_at timestamptz NOT NULL)`);
    // The restored servers run as `postgres` (the test runs as root): they must be able to enter `work`.
    work = await mkdtemp(join(tmpdir(), 'hf-kit-pitr-'));
    await chmod(work, 0o755);
    destination = join(work, 'destination');
    scratch = join(work, 'downloaded');
    kitDir = join(work, 'kit');
    for (const dir of [destination, kitDir]) await mkdir(dir);
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourcePostgres] as unknown as AnyAdapterDefinition[] });
    const repl = pitr.roles.repl!;
    server.catalog.addConfig({ configId: 'pg', name: 'PITR cluster', kind: 'source', adapterId: 'postgres', config: { mode: 'physical', host: '127.0.0.1', port: pitr.port, user: repl.user, password: repl.password, walFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: destination } });
    apiKey = await server.apiKey('kit-pitr', ['history:read', 'jobs:execute']);
  }, 120_000);

  afterAll(async () => {
    for (const dataDir of started) await run('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', dataDir, 'stop', '-m', 'immediate']).catch(() => undefined);
    if (!isServerClosed) await server?.close();
    // The shared cluster must not keep this test's slot: the stream stopped with the server, so it turns inactive.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await admin.query(`SELECT slot_name, active FROM pg_replication_slots WHERE slot_name LIKE $1`, [`%${JOB}%`]).catch(() => ({ rows: [] as Array<{ slot_name: string; active: boolean }> }));
      for (const row of rows.filter((slot) => !slot.active)) await admin.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]).catch(() => undefined);
      if (rows.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_nudge`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('restores an instant between commits and the latest state, reports a target replay never reaches, and refuses a non-empty folder, targets outside the window, missing WAL and a wrong key', async () => {
    server.catalog.addJob({ id: JOB, name: JOB, compression: 'ZSTD' }, 'pg', [{ configId: 'disk' }], { profileId: 'profile', key: jobKey });
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key: apiKey });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, apiKey, base.body.executionId, 180_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');

    const commits = await writeRows();
    const lastCommit = commits[commits.length - 1]!;
    // A window end at or after the last commit's return is enough: the stream dates a partial by the server's flush
    // position it reaches (flush-clock.ts), not by when the copy began (which once let CI restore "latest" without
    // the last row: pg_receivewal receives a commit some ms after the client saw it return). A partial is copied only
    // when the segment grew, so a write outside the test's table nudges it on a quiet cluster.
    await admin.query(`CREATE TABLE IF NOT EXISTS ${TABLE}_nudge (id serial PRIMARY KEY)`);
    await until(
      'a window that ends at or after the last commit',
      async () => {
        const window = (await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key: apiKey })).body?.data?.window;
        if (window && Date.parse(window.end) >= lastCommit.clientAfter) return true;
        await admin.query(`INSERT INTO ${TABLE}_nudge DEFAULT VALUES`);
        return false;
      },
      60_000,
    );

    // What a user downloads from the destination: the base backup with its sidecar, and pitr/<job id>/wal/. The
    // server stops first, so no piece is being rewritten while the folder is copied.
    await server.close();
    isServerClosed = true;
    await cp(destination, scratch, { recursive: true });
    const baseName = (await readdir(scratch)).find((name) => name.endsWith('.tar.zst.enc'));
    expect(baseName, 'the base backup in the destination').toBeDefined();
    const baseFile = join(scratch, baseName!);
    const sidecar = JSON.parse(await readFile(`${baseFile}.meta.json`, 'utf8')) as { pointInTime: { startSegment: string; consistentAt: string } };
    const walFolder = join(scratch, 'pitr', JOB, 'wal');
    const walObjects = await readdir(join(walFolder, '00000001'));
    expect(walObjects.every((name) => /^[0-9A-F]{24}(\.partial)?\.zst\.enc$/.test(name)), walObjects.join(', ')).toBe(true);
    expect(walObjects).toContain(`${sidecar.pointInTime.startSegment}.zst.enc`);

    for (const file of await buildRecoveryKit({ key: jobKey })) await writeFile(join(kitDir, file.name), file.content, { mode: file.mode });
    const keyArgs = ['--key-file', join(kitDir, 'holdfast-key.txt')];
    const common = [...keyArgs, '--base', baseFile, '--wal', walFolder];

    // An instant in the middle of a gap between two commits: the copy holds exactly the rows committed before it.
    const instant = pickInstant(commits, Date.parse(sidecar.pointInTime.consistentAt));
    const expected = commits.filter((commit) => commit.clientAfter <= instant).map((commit) => commit.id);
    const atInstant = join(work, 'restored-instant');
    const restored = await kit(['pitr', ...common, '--target-time', withOffset(instant), '--out', atInstant]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`runuser -u postgres -- ${PG_BIN}/pg_ctl -D ${atInstant} -l ${atInstant}/holdfast-restore.log start`);
    expect(restored.stderr).toMatch(/restored \d+ WAL segment\(s\)/);
    expect(existsSync(`${atInstant}.partial`)).toBe(false);
    expect(await readFile(join(atInstant, 'postgresql.auto.conf'), 'utf8')).toContain(`recovery_target_time = '${new Date(instant).toISOString().replace('T', ' ').replace('Z', '')}+00'`);
    const port = await freePort();
    started.push(atInstant);
    // The printed command, with a port of our own (the copy's configuration says 5433, where the source listens).
    await run('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', atInstant, '-l', join(atInstant, 'holdfast-restore.log'), '-o', `-p ${port}`, '-w', '-t', '120', 'start']);
    await until('the copy to promote', () => isPromoted(port), 60_000);
    const rows = await rowsOf(port);
    expect(rows).toEqual(expected);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(commits.length);
    await run('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', atInstant, 'stop', '-m', 'fast']);

    // --latest with --start: the kit starts the copy itself, waits for the promotion and cleans up its WAL folder.
    const latest = join(work, 'restored-latest');
    const latestPort = await freePort();
    started.push(latest);
    const served = await kit(['pitr', ...common, '--latest', '--out', latest, '--start', '--port', String(latestPort)]);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stdout).toContain(`PostgreSQL 15 is running on ${latest}, port ${latestPort}, promoted`);
    expect(existsSync(join(latest, 'holdfast-restore-wal'))).toBe(false);
    expect(await readFile(join(latest, 'postgresql.auto.conf'), 'utf8')).not.toContain('restore_command');
    expect(await rowsOf(latestPort)).toEqual(commits.map((commit) => commit.id));
    await run('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', latest, 'stop', '-m', 'fast']);

    // A restore point that was never created, with --start: PostgreSQL replays all the WAL, misses the target and
    // stops with a FATAL; the kit quotes it (exit 8), stops nothing left running, and leaves the prepared directory.
    const missingPoint = join(work, 'restored-missing-point');
    started.push(missingPoint);
    const failedStart = await kit(['pitr', ...common, '--target-name', `never-${SUFFIX}`, '--out', missingPoint, '--start', '--port', String(await freePort())]);
    expect(failedStart.code, failedStart.stderr).toBe(8);
    expect(failedStart.stderr).toContain('PostgreSQL stopped: recovery ended before configured recovery target was reached');
    expect(failedStart.stderr).toContain(`The data directory ${missingPoint} is left as it was prepared`);
    expect(failedStart.stderr).not.toContain('nothing was restored');
    expect(existsSync(join(missingPoint, 'postmaster.pid'))).toBe(false);

    // Refusals: each with its exit code and message, and nothing left at the output nor beside it.
    const occupied = join(work, 'occupied');
    await mkdir(occupied);
    await writeFile(join(occupied, 'keep.txt'), 'mine');
    const notEmpty = await kit(['pitr', ...common, '--latest', '--out', occupied]);
    expect(notEmpty.code).toBe(6);
    expect(notEmpty.stderr).toContain('is not an empty folder');
    expect(await readdir(occupied)).toEqual(['keep.txt']);

    const refusals: Array<[string, string[], number, RegExp]> = [
      ['before the base is consistent', [...common, '--target-time', withOffset(Date.parse(sidecar.pointInTime.consistentAt) - 60_000)], 8, /is before this base backup is consistent/],
      ['after the newest commit', [...common, '--target-time', withOffset(lastCommit.clientAfter + 3_600_000)], 8, /after the newest commit in the archived WAL/],
      ['a wrong key', ['--key-file', join(work, 'other-key.txt'), '--base', baseFile, '--wal', walFolder, '--latest'], 3, /wrong key/],
    ];
    await writeFile(join(work, 'other-key.txt'), `${randomBytes(32).toString('hex')}\n`);
    // Missing WAL: a folder without the base's start segment.
    const withoutStart = join(work, 'wal-without-start');
    await cp(walFolder, withoutStart, { recursive: true });
    await rm(join(withoutStart, '00000001', `${sidecar.pointInTime.startSegment}.zst.enc`));
    refusals.push(['missing WAL', [...keyArgs, '--base', baseFile, '--wal', withoutStart, '--latest'], 9, new RegExp(`WAL segment ${sidecar.pointInTime.startSegment}, where the base backup starts, is not in the --wal folder`)]);
    for (const [what, args, code, message] of refusals) {
      const out = join(work, `refused-${randomBytes(3).toString('hex')}`);
      const refused = await kit(['pitr', ...args, '--out', out]);
      expect(refused.code, `${what}: ${refused.stderr}`).toBe(code);
      expect(refused.stderr, what).toMatch(message);
      expect(refused.stderr, what).toContain('(nothing was restored)');
      expect(existsSync(out), what).toBe(false);
      expect(existsSync(`${out}.partial`), what).toBe(false);
    }
  }, 300_000);

  /** The kit's script as a plain child process: only PATH in its environment, no Holdfast code. */
  function kit(args: string[]): Promise<KitRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(kitDir, 'holdfast-decrypt.mjs'), ...args], { cwd: work, env: { PATH: process.env.PATH }, signal: AbortSignal.timeout(120_000) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** One autocommitted insert about every {@link COMMIT_EVERY_MS} for {@link WRITE_FOR_MS}, each commit logged. */
  async function writeRows(): Promise<Commit[]> {
    const writer = adminClient();
    await writer.connect();
    const commits: Commit[] = [];
    try {
      const end = Date.now() + WRITE_FOR_MS;
      for (let id = 1; Date.now() < end; id++) {
        const { rows } = await writer.query<{ at: Date }>(`INSERT INTO ${TABLE} VALUES ($1, clock_timestamp()) RETURNING committed_at AS at`, [id]);
        commits.push({ id, serverAt: rows[0]!.at.getTime(), clientAfter: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, COMMIT_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    return commits;
  }

  /** The copy's socket is where its copied configuration puts it (the source's socket folder), on its own port. */
  const copyClient = (port: number) => new pg.Client({ host: `${SERVICES}/postgres-pitr`, port, user: 'postgres', database: 'postgres' });

  async function isPromoted(port: number): Promise<boolean> {
    const client = copyClient(port);
    try {
      await client.connect();
      return !(await client.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering')).rows[0]!.recovering;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async function rowsOf(port: number): Promise<number[]> {
    const client = copyClient(port);
    await client.connect();
    try {
      return (await client.query<{ id: number }>(`SELECT id FROM ${TABLE} ORDER BY id`)).rows.map((row) => row.id);
    } finally {
      await client.end();
    }
  }
});

/**
 * An instant in the middle of the gap between one commit's end (client clock after COMMIT) and the next one's start
 * (server clock inside the insert), at least 50 ms from both and after the base is consistent; from the middle third
 * of the commits, so rows lie on both sides of it.
 */
function pickInstant(commits: Commit[], consistentAt: number): number {
  const third = Math.floor(commits.length / 3);
  for (let index = third; index < commits.length - third; index++) {
    const before = commits[index - 1]!.clientAfter;
    const after = commits[index]!.serverAt;
    if (after - before >= 100 && before > consistentAt) return Math.round((before + after) / 2);
  }
  throw new Error('no gap of 100 ms between commits in the middle third');
}
