// Issue 43, end to end in the source: a base backup taken by the physical-mode adapter and the WAL its stream
// yielded (the newest piece a partial snapshot, no segment switch) restore to an instant between two commits with
// restoreToPoint, and the restored copy holds exactly the rows committed before that instant. Runs as root on the
// test machine: the restored server runs as the `postgres` system user (restore-owner.ts).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { container } from 'tsyringe';
import { afterAll, expect, it } from 'vitest';
import { instantiateAdapter, type ChangeLogSegment, type PointRestoreResult } from '@holdfast/sdk';
import definition from '../src/index.js';
import { restoreToPoint } from '../src/internal/pitr/point-restore.js';
import { parseLsn } from '../src/internal/pitr/wal-names.js';
import { physicalConfig, physicalSettings, pitr, superSql } from './pitr-helpers.js';

const BIN = '/usr/lib/postgresql/15/bin';
const id = randomBytes(4).toString('hex');
const table = `hf_roundtrip_${id}`;
const streamId = `roundtrip-${id}`;
const work = mkdtempSync(join(tmpdir(), 'hf-pitr-roundtrip-'));
chmodSync(work, 0o755); // the restored server (user postgres) walks into it
const archive = join(work, 'archive');
mkdirSync(archive);
let served: PointRestoreResult | undefined;

const asPostgres = (command: string, args: string[]) => spawnSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8', timeout: 60_000 });

afterAll(async () => {
  if (served?.served) asPostgres(join(BIN, 'pg_ctl'), ['-D', served.served.dataDir, '-m', 'immediate', '-w', 'stop']);
  for (const warning of served?.warnings ?? []) {
    const runDir = /are in (\S+);/.exec(warning)?.[1];
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  }
  await instantiateAdapter(container, definition, physicalSettings()).pointInTime!()!.dropChangeLogStream!(streamId);
  await superSql(`DROP TABLE IF EXISTS ${table}`);
  rmSync(work, { recursive: true, force: true });
}, 30_000);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

it('a base backup and the streamed WAL restore to an instant between two commits', async () => {
  const support = instantiateAdapter(container, definition, physicalSettings('repl', { walFlushIntervalSeconds: 1 })).pointInTime!()!;
  await superSql(`CREATE TABLE ${table} (n int PRIMARY KEY, note text)`);
  await superSql(`GRANT SELECT ON ${table} TO ${pitr.roles.repl.user}`);

  // The archiver's part, kept minimal: copy each piece into the archive folder (a partial under <name>.partial,
  // replaced by newer ones), then tell the stream it is stored.
  const controller = new AbortController();
  const stream = support.openChangeLogStream({ streamId, spoolDir: join(work, 'spool'), flushIntervalMs: 1000, signal: controller.signal });
  const stored: ChangeLogSegment[] = [];
  const archiving = (async () => {
    for await (const segment of stream.segments) {
      copyFileSync(segment.path, join(archive, segment.partial ? `${segment.name}.partial` : segment.name));
      await stream.archived(segment);
      stored.push(segment);
    }
  })();

  const handle = await support.baseBackup({ signal: new AbortController().signal });
  const baseTar = join(work, 'base.tar');
  await pipeline(handle.stream, createWriteStream(baseTar));
  const { base } = await handle.done;

  const commits: Array<{ inside: Date; after: Date; lsn: string }> = [];
  const client = new pg.Client({ host: '/tmp/holdfast-test-services/postgres-pitr', port: pitr.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    for (let n = 1; n <= 5; n++) {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${table} VALUES ($1::int, 'row ' || $1::text)`, [n]);
      const inside = (await client.query<{ t: Date }>('SELECT clock_timestamp() AS t')).rows[0]!.t;
      await client.query('COMMIT');
      const after = (await client.query<{ t: Date; lsn: string }>('SELECT clock_timestamp() AS t, pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!;
      commits.push({ inside, after: after.t, lsn: after.lsn });
      await sleep(150);
    }
  } finally {
    await client.end();
  }
  // No pg_switch_wal: the last commits reach the archive only through a partial snapshot.
  const lastLsn = parseLsn(commits.at(-1)!.lsn);
  for (let waited = 0; !stored.some((segment) => segment.endPosition && parseLsn(segment.endPosition) >= lastLsn); waited += 100) {
    if (waited > 20_000) throw new Error(`no archived piece reached ${commits.at(-1)!.lsn}: ${stored.map((s) => `${s.name}${s.partial ? '(p)' : ''}@${s.endPosition}`).join(' ')}`);
    await sleep(100);
  }
  controller.abort();
  await stream.done;
  await archiving;
  expect(stored.some((segment) => segment.partial)).toBe(true);

  // Half-way between the end of commit 3 and the start of transaction 4.
  const target = new Date((commits[2]!.after.getTime() + commits[3]!.inside.getTime()) / 2);
  const port = await freePort();
  served = await restoreToPoint(physicalConfig(), {
    base,
    baseStream: createReadStream(baseTar),
    fetchSegment: (name) => {
      for (const file of [join(archive, name), join(archive, `${name}.partial`)]) if (existsSync(file)) return Promise.resolve(createReadStream(file));
      return Promise.resolve(null);
    },
    target: { type: 'time', time: target },
    targetPath: join(work, 'restored'),
    servePort: port,
    signal: AbortSignal.timeout(60_000),
  });
  const copy = new pg.Client({ host: '127.0.0.1', port, user: pitr.roles.repl.user, password: pitr.roles.repl.password, database: 'postgres' });
  await copy.connect();
  try {
    const rows = (await copy.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`)).rows.map((row) => row.n);
    expect(rows).toEqual([1, 2, 3]);
  } finally {
    await copy.end();
  }
  expect(served.recoveredTo!.getTime()).toBeGreaterThanOrEqual(commits[2]!.inside.getTime());
  expect(served.recoveredTo!.getTime()).toBeLessThanOrEqual(commits[2]!.after.getTime());
}, 60_000);
