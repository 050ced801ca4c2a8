// Issue 43 acceptance 1 and 7, real everything: the PITR test cluster (PostgreSQL 15 on 127.0.0.1:5433), the
// physical-mode PostgreSQL source, a job encrypted with a key profile and compressed with ZSTD whose two destinations
// are S3 (the Ceph test gateway) and SFTP (the test sshd). The change-log stream runs, a base backup is taken, a
// writer commits one row about every 100 ms for two minutes (as the issue asks), and three instants between commits are restored through
// POST /api/jobs/:id/point-in-time/restore from EACH destination (destinationId). Each restored cluster is served
// and must hold exactly the rows committed at or before its target. Bad requests answer 4xx and write nothing.
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import sourcePostgres from '@holdfast/source-postgres';
import storageS3 from '@holdfast/storage-s3';
import storageSftp from '@holdfast/storage-sftp';
import { createLocalPathPolicy, TOKENS, type AnyAdapterDefinition } from '@holdfast/kernel';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const run = promisify(execFile);
const SERVICES = '/tmp/holdfast-test-services';
const PG_CTL = '/usr/lib/postgresql/15/bin/pg_ctl';
const WRITE_FOR_MS = 120_000;
const COMMIT_EVERY_MS = 100;

const pitr = JSON.parse(await readFile(`${SERVICES}/postgres-pitr/postgres-pitr.json`, 'utf8')) as { host: string; port: number; roles: Record<string, { user: string; password: string }> };
const rgw = JSON.parse(await readFile(`${SERVICES}/ceph-rgw/ceph-rgw.json`, 'utf8')) as { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
const sshd = JSON.parse(await readFile(`${SERVICES}/sshd/sshd.json`, 'utf8')) as { host: string; port: number; user: string; password: string; home: string };

const SUFFIX = randomBytes(4).toString('hex');
const JOB = `pitre2e${SUFFIX}`;
const TABLE = `pitr_e2e_${SUFFIX}`;
const BUCKET = `holdfast-pitr-e2e-${SUFFIX}`;

/** One commit of the writer: the server's clock inside the insert, and the client's clock once COMMIT returned. */
interface Commit {
  id: number;
  serverAt: number;
  clientAfter: number;
}

/** Unix-socket superuser connection to the PITR cluster (the test runs as root, like the other PITR tests). */
const adminClient = () => new pg.Client({ host: `${SERVICES}/postgres-pitr`, port: pitr.port, user: 'postgres', database: 'postgres' });

describe('point-in-time restore through the API, S3 and SFTP, encrypted (issue 43 acceptance 1)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let key: string;
  let work: string;
  let sftpRoot: string;
  let s3: S3Client;
  const admin = adminClient();
  const served: string[] = [];

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, committed_at timestamptz NOT NULL)`);
    // The served copy takes logins of the source's roles: the replication role reads the table there.
    await admin.query(`GRANT SELECT ON ${TABLE} TO ${pitr.roles.repl!.user}`);
    s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    sftpRoot = join(sshd.home, `holdfast-pitr-e2e-${SUFFIX}`);
    await mkdir(sftpRoot);
    const home = await stat(sshd.home);
    await chown(sftpRoot, home.uid, home.gid);
    // The restored server runs as `postgres` (the test runs as root): it must be able to enter the targets' parent.
    work = await mkdtemp(join(tmpdir(), 'hf-pitr-e2e-'));
    await chmod(work, 0o755);

    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourcePostgres, storageS3, storageSftp] as unknown as AnyAdapterDefinition[] });
    // Restores may only write below `work` (the operator's HOLDFAST_LOCAL_ROOTS).
    server.handle.container.register(TOKENS.LocalPathPolicy, { useValue: createLocalPathPolicy({ allowedRoots: [work], protectedPaths: [target.dataDir] }) });
    const repl = pitr.roles.repl!;
    server.catalog.addConfig({ configId: 'pg', name: 'PITR cluster', kind: 'source', adapterId: 'postgres', config: { mode: 'physical', host: '127.0.0.1', port: pitr.port, user: repl.user, password: repl.password, walFlushIntervalSeconds: 1 } });
    server.catalog.addConfig({ configId: 's3', name: 'Ceph S3', kind: 'storage', adapterId: 's3', config: { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, bucket: BUCKET, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    server.catalog.addConfig({ configId: 'sftp', name: 'SFTP', kind: 'storage', adapterId: 'sftp', config: { host: sshd.host, port: sshd.port, username: sshd.user, password: sshd.password, root: sftpRoot } });
    server.catalog.addConfig({ configId: 'logical', name: 'Not PITR', kind: 'source', adapterId: 'pitr-double', config: { pointInTime: false } });
    key = await server.apiKey('pitr-e2e', ['history:read', 'jobs:execute', 'storage:restore']);
  }, 120_000);

  afterAll(async () => {
    for (const dataDir of served) await run('runuser', ['-u', 'postgres', '--', PG_CTL, '-D', dataDir, 'stop', '-m', 'immediate']).catch(() => undefined);
    await server?.close();
    // The shared cluster must not keep a slot of this test, whatever happened: the stream stopped with the server,
    // so its slot turns inactive within moments.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await admin.query(`SELECT slot_name, active FROM pg_replication_slots WHERE slot_name LIKE $1`, [`%${JOB}%`]).catch(() => ({ rows: [] as Array<{ slot_name: string; active: boolean }> }));
      for (const row of rows.filter((slot) => !slot.active)) await admin.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]).catch(() => undefined);
      if (rows.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    if (s3) {
      for (;;) {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET })).catch(() => null);
        const objects = (page?.Contents ?? []).map((object) => ({ Key: object.Key! }));
        if (objects.length === 0) break;
        await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: objects } }));
      }
      await s3.send(new DeleteBucketCommand({ Bucket: BUCKET })).catch(() => undefined);
      s3.destroy();
    }
    if (sftpRoot) await rm(sftpRoot, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('restores three instants between commits from each destination with exactly the rows committed by then; bad requests change nothing', async () => {
    server.catalog.addJob({ id: JOB, name: `pitr e2e ${SUFFIX}`, compression: 'ZSTD' }, 'pg', [{ configId: 's3', priority: 0 }, { configId: 'sftp', priority: 1 }], { profileId: 'profile', key: randomBytes(32) });
    server.catalog.addJob({ id: `plain${SUFFIX}`, name: 'not pitr' }, 'logical', [{ configId: 'sftp' }]);
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);

    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 180_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');

    const commits = await writeRows();
    const lastCommit = commits[commits.length - 1]!;
    const window = await until(
      'a window that ends after the last commit',
      async () => {
        const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
        const found = reply.body?.data?.window;
        return found && Date.parse(found.end) >= lastCommit.clientAfter ? found : undefined;
      },
      60_000,
    );
    const pieces = await server.changeLogs.piecesOf(JOB);
    expect(pieces.every((piece) => piece.destinations.includes('s3') && piece.destinations.includes('sftp'))).toBe(true);
    expect(pieces.every((piece) => piece.storageKey.endsWith('.zst.enc'))).toBe(true);

    // Acceptance 7: refusals before anything is queued or written.
    const fresh = () => join(work, `restore-${randomBytes(3).toString('hex')}`);
    const outside = fresh();
    const beforeWindow = new Date(Date.parse(window.start) - 3_600_000).toISOString();
    const tooEarly = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'time', time: beforeWindow }, targetPath: outside } });
    expect(tooEarly.status).toBe(422);
    expect(tooEarly.body.error).toContain(window.start);
    expect(await stat(outside).catch(() => null)).toBeNull();
    const occupied = fresh();
    await mkdir(occupied);
    await writeFile(join(occupied, 'keep.txt'), 'mine');
    const notEmpty = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: occupied } });
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.error).toContain('not empty');
    expect(await readdir(occupied)).toEqual(['keep.txt']);
    const outsideRoots = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: join(tmpdir(), `hf-pitr-outside-${SUFFIX}`) } });
    expect(outsideRoots.status).toBe(403);
    expect(outsideRoots.body.error).toContain('HOLDFAST_LOCAL_ROOTS');
    const noOffset = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'time', time: '2026-12-06T04:00:00' }, targetPath: fresh() } });
    expect(noOffset.status).toBe(400);
    const unknownField = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: fresh(), overwrite: true } });
    expect(unknownField.status).toBe(400);
    const relative = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: 'restore-here' } });
    expect(relative.status).toBe(400);
    expect((await call(server.url, 'POST', `/api/jobs/nosuchjob/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: fresh() } })).status).toBe(404);
    const notPitr = await call(server.url, 'POST', `/api/jobs/plain${SUFFIX}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: fresh() } });
    expect(notPitr.status).toBe(409);
    expect(notPitr.body.error).toContain('not set up for point-in-time recovery');
    const listener = await import('node:net').then(({ createServer }) => createServer());
    const busyPort = await new Promise<number>((resolve) => listener.listen(0, '127.0.0.1', () => resolve((listener.address() as { port: number }).port)));
    const portBusy = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: fresh(), servePort: busyPort } });
    listener.close();
    expect(portBusy.status, JSON.stringify(portBusy.body)).toBe(409);
    expect(portBusy.body.error).toContain(`servePort ${busyPort}`);
    expect(await readdir(work)).toEqual([occupied.slice(work.length + 1)]);

    // Three instants in the middle of gaps between commits, inside the window, each restored from both destinations.
    const instants = pickInstants(commits, Date.parse(window.start), Date.parse(window.end), 3);
    // Both destinations' restores of one instant run side by side (two queue slots) to keep the file short.
    server.settings.values.set('maxConcurrentJobs', 2);
    for (const instant of instants) {
      const expected = commits.filter((commit) => commit.clientAfter <= instant).map((commit) => commit.id);
      const restores = await Promise.all(
        ['s3', 'sftp'].map(async (destinationId, index) => {
          const targetPath = fresh();
          const servePort = await freeServePort(index);
          const reply = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'time', time: new Date(instant).toISOString() }, targetPath, servePort, destinationId } });
          expect(reply.status, JSON.stringify(reply.body)).toBe(202);
          served.push(targetPath);
          return { destinationId, targetPath, servePort, done: await waitForEnd(server.url, key, reply.body.data.executionId, 150_000) };
        }),
      );
      for (const { destinationId, targetPath, servePort, done } of restores) {
        expect(done.status, JSON.stringify(done.logs?.slice?.(-15))).toBe('Success');
        expect(JSON.stringify(done.logs)).toContain(`reading the base backup from ${destinationId === 's3' ? 'Ceph S3' : 'SFTP'}`);
        const rows = await rowsOf(servePort);
        await run('runuser', ['-u', 'postgres', '--', PG_CTL, '-D', targetPath, 'stop', '-m', 'fast']);
        expect(rows, `target ${new Date(instant).toISOString()} from ${destinationId}`).toEqual(expected);
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.length).toBeLessThan(commits.length);
        // The run reports the last commit replayed: the newest expected row's commit, before the target.
        const recoveredTo = /recovered to (\S+) \(the last commit replayed\)/.exec(JSON.stringify(done.logs))?.[1];
        expect(recoveredTo, 'recoveredTo in the run log').toBeDefined();
        expect(Date.parse(recoveredTo!)).toBeLessThanOrEqual(instant);
        expect(Date.parse(recoveredTo!)).toBeGreaterThanOrEqual(commits.find((commit) => commit.id === expected[expected.length - 1])!.serverAt);
        await rm(targetPath, { recursive: true, force: true });
      }
    }

    // Without destinationId the run reads the job's destinations by priority and falls back to the next: with the
    // base backup and its first log segment deleted from S3 by hand, those come from SFTP, the rest from S3, and the
    // copy at `latest` holds every row.
    const [recorded] = await server.changeLogs.basesOf(JOB);
    const firstSegment = (await server.changeLogs.piecesOf(JOB)).find((piece) => piece.name === recorded!.startSegment && !piece.partial);
    expect(firstSegment, 'the base backup\'s first segment is archived complete').toBeDefined();
    for (const gone of [recorded!.storageKey, `${recorded!.storageKey}.meta.json`, firstSegment!.storageKey]) await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: gone }));
    const latestPath = fresh();
    const latestPort = await freeServePort(0);
    const latest = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'latest' }, targetPath: latestPath, servePort: latestPort } });
    expect(latest.status, JSON.stringify(latest.body)).toBe(202);
    served.push(latestPath);
    const latestRun = await waitForEnd(server.url, key, latest.body.data.executionId, 150_000);
    expect(latestRun.status, JSON.stringify(latestRun.logs?.slice?.(-15))).toBe('Success');
    expect(JSON.stringify(latestRun.logs)).toContain(`${firstSegment!.storageKey} could not be read from Ceph S3`);
    expect(JSON.stringify(latestRun.logs)).toMatch(/read from Ceph S3"/);
    expect(JSON.stringify(latestRun.logs)).toContain('reading the base backup from SFTP');
    const allRows = await rowsOf(latestPort);
    await run('runuser', ['-u', 'postgres', '--', PG_CTL, '-D', latestPath, 'stop', '-m', 'fast']);
    expect(allRows).toEqual(commits.map((commit) => commit.id));
    await rm(latestPath, { recursive: true, force: true });

    // A failing run (a restore point that was never created: replay ends before the target) is Failed with the
    // server's reason and leaves nothing at the target nor beside it.
    const failedPath = fresh();
    const missingPoint = await call(server.url, 'POST', `/api/jobs/${JOB}/point-in-time/restore`, { key, json: { target: { type: 'name', name: `never-${SUFFIX}` }, targetPath: failedPath, destinationId: 'sftp' } });
    expect(missingPoint.status, JSON.stringify(missingPoint.body)).toBe(202);
    const failed = await waitForEnd(server.url, key, missingPoint.body.data.executionId, 150_000);
    expect(failed.status).toBe('Failed');
    expect(JSON.stringify(failed.logs)).toContain('point-in-time restore failed');
    expect(JSON.stringify(failed.logs)).toMatch(/recovery ended before configured recovery target was reached/);
    expect(await stat(failedPath).catch(() => null)).toBeNull();
    expect((await readdir(work)).filter((name) => name !== occupied.slice(work.length + 1))).toEqual([]);
  }, 540_000);

  /** One autocommitted insert about every {@link COMMIT_EVERY_MS} for {@link WRITE_FOR_MS}, each commit logged. */
  async function writeRows(): Promise<Commit[]> {
    const writer = adminClient();
    await writer.connect();
    const commits: Commit[] = [];
    try {
      const until = Date.now() + WRITE_FOR_MS;
      for (let id = 1; Date.now() < until; id++) {
        const { rows } = await writer.query<{ at: Date }>(`INSERT INTO ${TABLE} VALUES ($1, clock_timestamp()) RETURNING committed_at AS at`, [id]);
        commits.push({ id, serverAt: rows[0]!.at.getTime(), clientAfter: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, COMMIT_EVERY_MS));
      }
    } finally {
      await writer.end();
    }
    return commits;
  }

  async function rowsOf(port: number): Promise<number[]> {
    const repl = pitr.roles.repl!;
    const client = new pg.Client({ host: '127.0.0.1', port, user: repl.user, password: repl.password, database: 'postgres' });
    await client.connect();
    try {
      return (await client.query<{ id: number }>(`SELECT id FROM ${TABLE} ORDER BY id`)).rows.map((row) => row.id);
    } finally {
      await client.end();
    }
  }
});

/**
 * `count` random instants inside [start, end], each in the middle of the gap between one commit's end (client clock
 * after COMMIT) and the next one's start (server clock inside the insert), and at least 50 ms from both: a commit's
 * timestamp lies between those two clocks, so the rows the copy must hold are known exactly.
 */
function pickInstants(commits: Commit[], start: number, end: number, count: number): number[] {
  const gaps: number[] = [];
  for (let index = 1; index < commits.length - 1; index++) {
    const before = commits[index - 1]!.clientAfter;
    const after = commits[index]!.serverAt;
    const middle = Math.round((before + after) / 2);
    if (after - before >= 100 && middle > start && middle < end) gaps.push(middle);
  }
  expect(gaps.length).toBeGreaterThanOrEqual(count);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(gaps[randomInt(gaps.length)]!);
  return [...picked].sort((a, b) => a - b);
}

/**
 * A port for a restored server: below Linux's ephemeral range (32768 and up, where outgoing connections of the busy
 * machine take ports: CI once drew one in use), in a band per parallel restore, and free right now.
 */
async function freeServePort(band: number): Promise<number> {
  const { createServer } = await import('node:net');
  for (;;) {
    const port = 12_000 + band * 10_000 + randomInt(10_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
