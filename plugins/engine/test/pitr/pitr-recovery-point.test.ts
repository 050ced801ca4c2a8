// Issue 43 acceptance 4, the short automated check (the 5-minute figure comes from
// tooling/bench/pitr-recovery-point.mjs and is in docs/pitr.md, "Measured"): the PITR test cluster, the physical-mode
// PostgreSQL source with a 1 s flush interval, one local destination, one base backup; then one commit a second for
// 40 s while the window is read from GET /api/jobs/:id/point-in-time every second. The newest archived WAL must never
// be older than the flush interval plus 10 s, and every commit must be covered by the window within that time.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sourcePostgres from '@holdfast/source-postgres';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, waitForEnd, type TestDatabaseTarget } from '../support/harness.js';
import { startPitrServer, until, type PitrServer } from './pitr-server.js';

const SERVICES = '/tmp/holdfast-test-services';
const FLUSH_SECONDS = 1;
const BOUND_MS = (FLUSH_SECONDS + 10) * 1000;
const WRITE_FOR_MS = 40_000;

const pitr = JSON.parse(await readFile(`${SERVICES}/postgres-pitr/postgres-pitr.json`, 'utf8')) as { port: number; roles: Record<string, { user: string; password: string }> };
const SUFFIX = randomBytes(4).toString('hex');
const JOB = `pitrrp${SUFFIX}`;
const TABLE = `pitr_rp_${SUFFIX}`;
const adminClient = () => new pg.Client({ host: `${SERVICES}/postgres-pitr`, port: pitr.port, user: 'postgres', database: 'postgres' });

interface Sample {
  at: number;
  end: number | null;
}

describe('recovery point with one commit a second (issue 43 acceptance 4)', () => {
  let target: TestDatabaseTarget;
  let server: PitrServer;
  let key: string;
  let dest: string;
  const admin = adminClient();

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, committed_at timestamptz NOT NULL)`);
    dest = await mkdtemp(join(tmpdir(), 'hf-pitr-rp-'));
    target = await createTarget('sqlite');
    server = await startPitrServer(target, { adapters: [sourcePostgres] as unknown as AnyAdapterDefinition[] });
    const repl = pitr.roles.repl!;
    server.catalog.addConfig({ configId: 'pg', name: 'PITR cluster', kind: 'source', adapterId: 'postgres', config: { mode: 'physical', host: '127.0.0.1', port: pitr.port, user: repl.user, password: repl.password, walFlushIntervalSeconds: FLUSH_SECONDS } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dest } });
    key = await server.apiKey('pitr-rp', ['history:read', 'jobs:execute']);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    // The stream stopped with the server: its slot turns inactive within moments and must not stay on the cluster.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await admin.query(`SELECT slot_name, active FROM pg_replication_slots WHERE slot_name LIKE $1`, [`%${JOB}%`]).catch(() => ({ rows: [] as Array<{ slot_name: string; active: boolean }> }));
      for (const row of rows.filter((slot) => !slot.active)) await admin.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]).catch(() => undefined);
      if (rows.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    if (dest) await rm(dest, { recursive: true, force: true });
    await target?.drop();
  }, 60_000);

  it('never lets the newest archived WAL lag the newest commit by more than the flush interval plus 10 s', async () => {
    server.catalog.addJob({ id: JOB, name: `pitr recovery point ${SUFFIX}`, compression: 'ZSTD' }, 'pg', [{ configId: 'disk', priority: 0 }]);
    await until('the change-log stream', async () => (await server.changeLogs.streamOf(JOB))?.state === 'streaming', 60_000);
    const base = await call(server.url, 'POST', `/api/jobs/${JOB}/run`, { key });
    expect(base.status, JSON.stringify(base.body)).toBeLessThan(300);
    const baseRun = await waitForEnd(server.url, key, base.body.executionId, 120_000);
    expect(baseRun.status, JSON.stringify(baseRun.logs)).toBe('Success');
    const windowEnd = async (): Promise<number | null> => {
      const reply = await call(server.url, 'GET', `/api/jobs/${JOB}/point-in-time`, { key });
      expect(reply.status).toBe(200);
      const found = reply.body.data.window as { end: string } | null;
      return found ? Date.parse(found.end) : null;
    };
    await until('a window', windowEnd, 60_000);

    const commits: number[] = [];
    const samples: Sample[] = [];
    const writeUntil = Date.now() + WRITE_FOR_MS;
    const writer = adminClient();
    await writer.connect();
    const writing = (async () => {
      try {
        for (let id = 1; Date.now() < writeUntil; id++) {
          const tick = Date.now();
          await writer.query(`INSERT INTO ${TABLE} VALUES ($1, clock_timestamp())`, [id]);
          commits.push(Date.now());
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
        }
      } finally {
        await writer.end();
      }
    })();
    // Sampling goes on past the last commit for the bound, so the last commits must be seen covered too.
    while (Date.now() < writeUntil + BOUND_MS) {
      const tick = Date.now();
      const end = await windowEnd();
      samples.push({ at: Date.now(), end });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
    }
    await writing;

    const during = samples.filter((sample) => sample.at <= writeUntil);
    expect(during.length).toBeGreaterThanOrEqual(WRITE_FOR_MS / 1000 - 5);
    const ages = during.map((sample) => (sample.end === null ? Infinity : sample.at - sample.end));
    expect(Math.max(...ages), `ages (ms): ${ages.join(', ')}`).toBeLessThanOrEqual(BOUND_MS);
    // The window follows the writer: it moved by most of the writing time (a frozen window would fail here).
    expect(during[during.length - 1]!.end! - during[0]!.end!).toBeGreaterThan(WRITE_FOR_MS - BOUND_MS);
    expect(commits.length).toBeGreaterThanOrEqual(WRITE_FOR_MS / 1000 - 5);
    for (const committedAt of commits) {
      const covering = samples.find((sample) => sample.end !== null && sample.end >= committedAt);
      expect(covering, `the commit at ${new Date(committedAt).toISOString()} was never covered by the window`).toBeDefined();
      expect(covering!.at - committedAt).toBeLessThanOrEqual(BOUND_MS);
    }
  }, 240_000);
});
