// Issue 43: restore to a point in time, against the PITR test cluster (127.0.0.1:5433). The fixture is built here with
// the PostgreSQL tools only (pg_receivewal on a slot of its own, pg_basebackup as a tar), then rows are committed one
// by one; restores to a time between two commits, an LSN, a named restore point and "latest" must each hold exactly
// the rows committed up to there. These tests run as root on the test machine, so the restored server runs as the
// `postgres` system user through runuser (restore-owner.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import pg from 'pg';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAdapterError, type BaseBackupInfo, type PointRestoreInput, type PointRestoreResult, type RecoveryTarget } from '@holdfast/sdk';
import { postgresSourceConfig } from '../src/config.js';
import { restoreToPoint } from '../src/internal/pitr/point-restore.js';
import { nextSegmentName, segmentOf } from '../src/internal/pitr/restore-wal.js';

interface PitrState {
  host: string;
  port: number;
  roles: { repl: { user: string; password: string } };
}
// Written by tooling/test-services/postgres-pitr.mjs (this package's vitest globalSetup); its socket allows superuser.
const pitr = JSON.parse(readFileSync('/tmp/holdfast-test-services/postgres-pitr/postgres-pitr.json', 'utf8')) as PitrState;
const SOCKET_DIR = '/tmp/holdfast-test-services/postgres-pitr';
const BIN = '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;
const config = postgresSourceConfig.parse({ host: pitr.host, port: pitr.port, user: pitr.roles.repl.user, password: pitr.roles.repl.password });
const replEnv = { ...process.env, PGPASSWORD: pitr.roles.repl.password };

const id = randomBytes(4).toString('hex');
const table = `holdfast_pitr_${id}`;
const slot = `holdfast_t_${id}`;
const restorePoint = `holdfast_rp_${id}`;
const ROWS = 8;
/** The restore point is created right after this row's commit. */
const NAMED_AFTER = 5;

let work: string;
let walDir: string;
let baseTar: string;
let base: BaseBackupInfo;
let receiver: ChildProcess | undefined;
/** Per row (index = row number): server time inside its transaction, after its COMMIT, and the LSN after COMMIT. */
const commits: { inside: Date; after: Date; lsn: string }[] = [];
const served: string[] = [];

async function superuser<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]> {
  const client = new pg.Client({ host: SOCKET_DIR, port: pitr.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function asPostgres(command: string, args: string[]) {
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The base tar without some members, re-packed as a stream (a Debian cluster's base has no config files). */
function baseWithout(names: string[]): Readable {
  const extract = tar.extract();
  const pack = tar.pack();
  extract.on('entry', (header, body, next) => {
    if (names.includes(header.name)) {
      body.once('end', () => next());
      body.resume();
      return;
    }
    body.pipe(pack.entry(header, (error) => next(error ?? undefined)));
  });
  extract.once('finish', () => pack.finalize());
  createReadStream(baseTar).pipe(extract);
  return pack;
}

function restoreInput(target: RecoveryTarget, targetPath: string, extra: Partial<PointRestoreInput> = {}): PointRestoreInput {
  return {
    base,
    baseStream: createReadStream(baseTar),
    // Completed segments first; the one pg_receivewal was still writing is asked for by its full name.
    fetchSegment: (name) => {
      for (const file of [join(walDir, name), join(walDir, `${name}.partial`)]) if (existsSync(file)) return Promise.resolve(createReadStream(file));
      return Promise.resolve(null);
    },
    target,
    targetPath,
    signal: AbortSignal.timeout(60_000),
    ...extra,
  };
}

/** Row numbers of the test table in a stopped restored data directory: started here on a private socket, then stopped. */
function rowsInStoppedCopy(dataDir: string): number[] {
  const socket = mkdtempSync(join(tmpdir(), 'hf-pitr-check-'));
  chmodSync(socket, 0o777);
  const options = `-c port=5499 -c listen_addresses='' -c unix_socket_directories='${socket}'`;
  const started = asPostgres(join(BIN, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', join(socket, 'log'), '-w', 'start']);
  expect(started.status, started.stderr).toBe(0);
  try {
    // As the postgres OS user: peer authentication, which the pg_hba.conf written for a Debian-like base allows.
    const query = asPostgres('psql', ['-h', socket, '-p', '5499', '-U', 'postgres', '-d', 'postgres', '-Atc', `SELECT n FROM ${table} ORDER BY n`]);
    expect(query.status, query.stderr).toBe(0);
    return query.stdout.split('\n').filter(Boolean).map(Number);
  } finally {
    asPostgres(join(BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    rmSync(socket, { recursive: true, force: true });
  }
}

/** Row numbers read from a served copy over TCP, as the replication role (it was granted SELECT on the table). */
async function rowsInServedCopy(port: number): Promise<number[]> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: pitr.roles.repl.user, password: pitr.roles.repl.password, database: 'postgres' });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`)).rows.map((row) => row.n);
  } finally {
    await client.end();
  }
}

function stopServed(result: PointRestoreResult): void {
  if (!result.served) return;
  asPostgres(join(BIN, 'pg_ctl'), ['-D', result.served.dataDir, '-m', 'fast', '-w', 'stop']);
  for (const warning of result.warnings) {
    const runDir = /are in (\S+);/.exec(warning)?.[1];
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  }
}

const upTo = (k: number) => Array.from({ length: k }, (_, index) => index + 1);
/** An instant half-way between the end of commit k and the start of transaction k+1 (both server clock). */
const between = (k: number) => new Date((commits[k]!.after.getTime() + commits[k + 1]!.inside.getTime()) / 2);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hf-pitr-restore-'));
  // The restored server runs as `postgres` (root here): it must be able to walk into the work folder.
  chmodSync(work, 0o755);
  walDir = join(work, 'wal');
  mkdirSync(walDir);
  baseTar = join(work, 'base.tar');
  await superuser(`CREATE TABLE ${table} (n int PRIMARY KEY, note text)`);
  await superuser(`GRANT SELECT ON ${table} TO ${pitr.roles.repl.user}`);
  await superuser('SELECT pg_create_physical_replication_slot($1, true)', [slot]);

  const connection = ['-h', pitr.host, '-p', String(pitr.port), '-U', pitr.roles.repl.user, '--no-password'];
  receiver = spawn('pg_receivewal', [...connection, '-D', walDir, '--slot', slot], { env: replEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  for (let waited = 0; !readdirSync(walDir).some((file) => file.endsWith('.partial')); waited += 100) {
    if (waited > 10_000) throw new Error('pg_receivewal did not start streaming');
    await sleep(100);
  }

  const backup = spawnSync('sh', ['-c', `pg_basebackup ${connection.join(' ')} -D - -Ft -X none --checkpoint=fast -v > '${baseTar}'`], { env: replEnv, encoding: 'utf8' });
  expect(backup.status, backup.stderr).toBe(0);
  // pg_basebackup -v says nothing of the WAL range when writing to stdout: read it from the tar's backup_label and manifest.
  const label = spawnSync('tar', ['-xOf', baseTar, 'backup_label'], { encoding: 'utf8' }).stdout;
  const manifest = JSON.parse(spawnSync('tar', ['-xOf', baseTar, 'backup_manifest'], { encoding: 'utf8' }).stdout) as {
    'WAL-Ranges': { Timeline: number; 'Start-LSN': string; 'End-LSN': string }[];
  };
  const start = /START WAL LOCATION: (\S+)/.exec(label);
  const labelTimeline = /START TIMELINE: (\d+)/.exec(label);
  const range = manifest['WAL-Ranges'][0]!;
  expect(range['Start-LSN']).toBe(start![1]);
  const [control] = await superuser<{ system_identifier: string; server_version: string; now: Date }>(
    'SELECT system_identifier::text, current_setting($1) AS server_version, clock_timestamp() AS now FROM pg_control_system()',
    ['server_version'],
  );
  const timeline = Number(labelTimeline![1]);
  base = {
    logKind: 'postgres-wal',
    startPosition: start![1]!,
    stopPosition: range['End-LSN'],
    startSegment: segmentOf(start![1]!, timeline),
    timeline,
    systemId: control!.system_identifier,
    serverVersion: control!.server_version,
    startedAt: control!.now,
    consistentAt: control!.now,
  };

  const client = new pg.Client({ host: SOCKET_DIR, port: pitr.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    commits.push({ inside: new Date(0), after: new Date(0), lsn: '' }); // row numbers start at 1
    for (let n = 1; n <= ROWS; n += 1) {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${table} VALUES ($1::int, 'row ' || $1::text)`, [n]);
      const inside = (await client.query<{ t: Date }>('SELECT clock_timestamp() AS t')).rows[0]!.t;
      await client.query('COMMIT');
      // The insert position: the test cluster runs synchronous_commit=off, so the write position may lag the commit.
      const after = (await client.query<{ t: Date; lsn: string }>('SELECT clock_timestamp() AS t, pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!;
      commits.push({ inside, after: after.t, lsn: after.lsn });
      if (n === NAMED_AFTER) await client.query('SELECT pg_create_restore_point($1)', [restorePoint]);
      await sleep(100);
    }
    const switched = (await client.query<{ lsn: string }>('SELECT pg_switch_wal()::text AS lsn')).rows[0]!.lsn;
    // The segment holding the last commit is complete once pg_receivewal wrote it under its final name.
    const last = segmentOf(switched, timeline);
    for (let waited = 0; !existsSync(join(walDir, last)); waited += 100) {
      if (waited > 15_000) throw new Error(`pg_receivewal did not complete segment ${last}`);
      await sleep(100);
    }
  } finally {
    await client.end();
  }
  receiver.kill('SIGINT');
  await new Promise((resolve) => receiver!.once('close', resolve));
  receiver = undefined;
}, 60_000);

afterAll(async () => {
  receiver?.kill('SIGKILL');
  for (const dir of served) asPostgres(join(BIN, 'pg_ctl'), ['-D', dir, '-m', 'immediate', '-w', 'stop']);
  await superuser('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1', [slot]).catch(() => undefined);
  await superuser(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('WAL segment names', () => {
  it('steps to the next segment, rolling over after …FF, and names the segment of an LSN', () => {
    expect(nextSegmentName('000000010000000000000003')).toBe('000000010000000000000004');
    expect(nextSegmentName('0000000200000001000000FF')).toBe('000000020000000200000000');
    expect(segmentOf('0/3000028', 1)).toBe('000000010000000000000003');
    expect(segmentOf('1/FF000000', 2)).toBe('0000000200000001000000FF');
    // 64 MiB segments (initdb --wal-segsize=64): 64 per 4 GiB log.
    expect(nextSegmentName('00000001000000000000003F', 64 * 1024 * 1024)).toBe('000000010000000100000000');
    expect(segmentOf('0/8000000', 1, 64 * 1024 * 1024)).toBe('000000010000000000000002');
  });
});

describe('restoreToPoint against the PITR test cluster', () => {
  it('restores to an instant between two commits: exactly the rows committed before it (check mode, server stopped)', async () => {
    const targetPath = join(work, 'restore-time');
    const progress: string[] = [];
    const result = await restoreToPoint(config, restoreInput({ type: 'time', time: between(3) }, targetPath, { onProgress: (message) => progress.push(message) }));
    expect(result.served).toBeUndefined();
    // The copy's last commit is row 3's or a later one of another test on the shared cluster, never past the target
    // (one CI run saw another file's commit 5 ms after row 3's COMMIT returned); the rows below are exact.
    expect(result.recoveredTo!.getTime()).toBeGreaterThanOrEqual(commits[3]!.inside.getTime());
    expect(result.recoveredTo!.getTime()).toBeLessThanOrEqual(between(3).getTime());
    expect(progress.some((line) => line.startsWith('replayed WAL segment'))).toBe(true);
    // pg_waldump saw row 4's commit (past the target) in a segment: the segments after it were not fetched.
    const fetched = progress.filter((line) => line.startsWith('fetched WAL segment')).length;
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThan(readdirSync(walDir).length);
    // Check mode: stopped, recovery over (no recovery.signal, no recovery settings), WAL folder gone.
    expect(existsSync(join(targetPath, 'postmaster.pid'))).toBe(false);
    expect(existsSync(join(targetPath, 'recovery.signal'))).toBe(false);
    expect(readFileSync(join(targetPath, 'postgresql.auto.conf'), 'utf8')).not.toContain('restore_command');
    expect(existsSync(join(work, '.restore-time.wal'))).toBe(false);
    expect(rowsInStoppedCopy(targetPath)).toEqual(upTo(3));
  });

  it('restores to an LSN (served on a port): the rows committed up to it', async () => {
    const port = await freePort();
    const targetPath = join(work, 'restore-lsn');
    const result = await restoreToPoint(config, restoreInput({ type: 'position', position: commits[6]!.lsn }, targetPath, { servePort: port }));
    served.push(targetPath);
    try {
      expect(result.served).toEqual({ port, dataDir: targetPath });
      expect(await rowsInServedCopy(port)).toEqual(upTo(6));
    } finally {
      stopServed(result);
    }
  });

  it('restores to a named restore point and to "latest"', async () => {
    const port = await freePort();
    const named = await restoreToPoint(config, restoreInput({ type: 'name', name: restorePoint }, join(work, 'restore-name'), { servePort: port }));
    served.push(join(work, 'restore-name'));
    try {
      expect(await rowsInServedCopy(port)).toEqual(upTo(NAMED_AFTER));
    } finally {
      stopServed(named);
    }
    // A base as Debian's clusters give it: postgresql.conf and pg_hba.conf live in /etc, not in the data directory.
    const debianLike = baseWithout(['postgresql.conf', 'pg_hba.conf', 'pg_ident.conf']);
    const latest = await restoreToPoint(config, restoreInput({ type: 'latest' }, join(work, 'restore-latest'), { baseStream: debianLike }));
    expect(latest.warnings).toEqual(expect.arrayContaining([expect.stringContaining('had no postgresql.conf'), expect.stringContaining('had no pg_hba.conf')]));
    expect(rowsInStoppedCopy(join(work, 'restore-latest'))).toEqual(upTo(ROWS));
    expect(latest.recoveredTo!.getTime()).toBeGreaterThanOrEqual(commits[ROWS]!.inside.getTime());
  });

  it('refuses a target folder that is not empty, before writing anything', async () => {
    const targetPath = join(work, 'occupied');
    mkdirSync(targetPath);
    writeFileSync(join(targetPath, 'keep.txt'), 'mine');
    const error = await restoreToPoint(config, restoreInput({ type: 'latest' }, targetPath)).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('is not empty');
    expect(readdirSync(targetPath)).toEqual(['keep.txt']);
    expect(existsSync(join(work, '.occupied.wal'))).toBe(false);
    const relative = await restoreToPoint(config, restoreInput({ type: 'latest' }, 'relative/path')).catch((caught: unknown) => caught);
    expect(isAdapterError(relative) && relative.code).toBe('CONFIG');
    const shelly = await restoreToPoint(config, restoreInput({ type: 'latest' }, join(work, 'a$(touch x)'))).catch((caught: unknown) => caught);
    expect(isAdapterError(shelly) && shelly.code).toBe('CONFIG');
    const orphan = await restoreToPoint(config, restoreInput({ type: 'latest' }, join(work, 'missing-parent', 'copy'))).catch((caught: unknown) => caught);
    expect((orphan as Error).message).toContain('does not exist');
    const busy = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => busy.once('listening', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const taken = await restoreToPoint(config, restoreInput({ type: 'latest' }, join(work, 'restore-busy'), { servePort: port })).catch((caught: unknown) => caught);
      expect((taken as Error).message).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(existsSync(join(work, 'restore-busy'))).toBe(false);
    } finally {
      busy.close();
    }
    const ancient = await restoreToPoint(config, restoreInput({ type: 'latest' }, join(work, 'restore-old'), { base: { ...base, serverVersion: '9.4.26' } })).catch((caught: unknown) => caught);
    expect(isAdapterError(ancient) && ancient.code).toBe('CONFIG');
    expect((ancient as Error).message).toMatch(/PostgreSQL 9\.4 server programs \(postgres, pg_ctl\) were not found; tried .*\/usr\/lib\/postgresql\/9\.4\/bin.*apt-get install postgresql-9\.4/);
  });

  it('stops the server and removes everything when aborted during recovery', async () => {
    const targetPath = join(work, 'restore-aborted');
    mkdirSync(targetPath, { mode: 0o750 });
    const controller = new AbortController();
    const onProgress = (message: string) => {
      if (message.startsWith('starting PostgreSQL')) setImmediate(() => controller.abort());
    };
    const error = await restoreToPoint(config, restoreInput({ type: 'latest' }, targetPath, { signal: controller.signal, onProgress })).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    // The target existed empty, so it stays, empty, with its mode; the WAL folder beside it is gone.
    expect(readdirSync(targetPath)).toEqual([]);
    expect(statSync(targetPath).mode & 0o777).toBe(0o750);
    expect(existsSync(join(work, '.restore-aborted.wal'))).toBe(false);
    expect(spawnSync('pgrep', ['-f', targetPath]).status).toBe(1);
  });

  it('fails a time target past the end of the archived WAL with the server\'s reason, and leaves no trace', async () => {
    const targetPath = join(work, 'restore-future');
    const future = new Date(Date.now() + 3_600_000);
    const error = await restoreToPoint(config, restoreInput({ type: 'time', time: future }, targetPath)).catch((caught: unknown) => caught);
    expect(isAdapterError(error)).toBe(true);
    expect((error as Error).message).toContain('recovery ended before configured recovery target was reached');
    expect(existsSync(targetPath)).toBe(false);
    expect(existsSync(join(work, '.restore-future.wal'))).toBe(false);
  });
});
