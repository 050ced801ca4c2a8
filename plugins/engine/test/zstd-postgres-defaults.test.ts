// Issue 21, acceptance 5: a PostgreSQL backup written the way Holdfast wrote ZSTD jobs before the change (pg_dump's
// own zlib on, then one zstd stream compressed on the main thread with the binding's streaming Compressor, sidecar
// without `threads`) still restores after it; and a ZSTD job run now dumps with pg_dump's compression off and
// compresses frames on threads, and restores as well. Both restores are compared row for row with the source. The
// same for GZIP jobs: before, pg_dump's zlib and one gzip stream; now pg_dump -Z0 and gzip members compressed on
// several threads.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Compressor, Decompressor } from '@cloudpss/zstd/napi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultZstdThreads, ZSTD_FRAME_BYTES } from '../src/codec/index.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const sql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();

function fingerprint(database: string): string {
  return sql(database, `SELECT count(*) || ':' || md5(string_agg(t::text, ',' ORDER BY id)) FROM items t`);
}

/** Runs bytes through one of the binding's streaming transforms (what the engine used for ZSTD before the change). */
async function throughBinding(stream: Compressor | Decompressor, input: Buffer): Promise<Buffer> {
  const output: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => output.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  stream.end(input);
  await ended;
  return Buffer.concat(output);
}

/** `pg_dump -Fc` with its default compression, as the source adapter ran it for every job before the change. */
async function legacyPgDump(database: string): Promise<Buffer> {
  const child = spawn('pg_dump', ['-h', '127.0.0.1', '-U', 'root', '-Fc', database], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`pg_dump exited ${code}`);
  return Buffer.concat(chunks);
}

describe('ZSTD PostgreSQL jobs before and after the new defaults (pg_dump -Z0, zstd frames on threads)', () => {
  const suffix = randomBytes(4).toString('hex');
  const sourceDb = `hf_zsrc_${suffix}`;
  const restoredOld = `hf_zold_${suffix}`;
  const restoredNew = `hf_znew_${suffix}`;
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    sql('postgres', `CREATE DATABASE ${sourceDb}`);
    // Repetitive text: pg_dump's zlib shrinks it a lot, so a dump with and without -Z0 differ clearly in size.
    sql(sourceDb, `CREATE TABLE items (id int PRIMARY KEY, label text, body text);
      INSERT INTO items SELECT g, 'item ' || g, repeat('holdfast backup line ' || (g % 50), 8) FROM generate_series(1, 60000) g;`);
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-zstd-defaults-'));
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    // The job as a ZSTD job saved before the change looks: pgCompression '' and no level or thread fields at all.
    server.catalog.addJob({ id: 'zstd-job', name: 'zstd shop', databases: [sourceDb], compression: 'ZSTD' }, 'pg', [{ configId: 'local' }]);
    key = await server.apiKey('ci', ['jobs:execute', 'history:read', 'storage:restore']);
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
    for (const database of [sourceDb, restoredOld, restoredNew]) sql('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('restores a backup written with the old defaults (pg_dump zlib + single-stream zstd, old sidecar)', async () => {
    const dump = await legacyPgDump(sourceDb);
    const file = await throughBinding(new Compressor(3), dump);
    const name = 'zstd-shop_2026-11-20_03-00-00.dump.zst';
    await writeFile(join(dir, name), file);
    // The sidecar exactly as the engine wrote it before: no `threads`, no `frameBytes`.
    const sidecar = {
      formatVersion: 1,
      createdAt: '2026-11-20T03:00:00.000Z',
      sha256: createHash('sha256').update(file).digest('hex'),
      md5: createHash('md5').update(file).digest('hex'),
      size: file.length,
      locked: false,
      trigger: { type: 'Scheduler' },
      compression: { codec: 'ZSTD', level: 3, extension: '.zst' },
      encryption: null,
      source: { kind: 'source', adapterId: 'postgres', configId: 'pg', engineVersion: '15' },
      databases: [sourceDb],
      jobId: 'zstd-job',
      jobName: 'zstd shop',
      executionId: 'legacy-execution',
    };
    await writeFile(join(dir, `${name}.meta.json`), `${JSON.stringify(sidecar, null, 2)}\n`);

    const restore = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file: name, database: restoredOld } });
    expect(restore.status).toBe(200);
    const restored = await waitForEnd(server.url, key, restore.body.executionId, 120_000);
    expect(restored.status, JSON.stringify(restored.logs)).toBe('Success');
    expect(fingerprint(sourceDb)).toMatch(/^60000:/);
    expect(fingerprint(restoredOld)).toBe(fingerprint(sourceDb));
  });

  it('GZIP: restores a backup written before (pg_dump zlib + one gzip stream), and a new one (pg_dump -Z0, gzip members)', async () => {
    server.catalog.addJob({ id: 'gzip-job', name: 'gzip shop', databases: [sourceDb], compression: 'GZIP' }, 'pg', [{ configId: 'local' }]);
    const legacy = gzipSync(await legacyPgDump(sourceDb), { level: 3 });
    const name = 'gzip-shop_2026-11-20_03-00-00.dump.gz';
    await writeFile(join(dir, name), legacy);
    const sidecar = {
      formatVersion: 1,
      createdAt: '2026-11-20T03:00:00.000Z',
      sha256: createHash('sha256').update(legacy).digest('hex'),
      md5: createHash('md5').update(legacy).digest('hex'),
      size: legacy.length,
      locked: false,
      trigger: { type: 'Scheduler' },
      compression: { codec: 'GZIP', level: 3, extension: '.gz' },
      encryption: null,
      source: { kind: 'source', adapterId: 'postgres', configId: 'pg', engineVersion: '15' },
      databases: [sourceDb],
      jobId: 'gzip-job',
      jobName: 'gzip shop',
      executionId: 'legacy-gzip-execution',
    };
    await writeFile(join(dir, `${name}.meta.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
    const restoredLegacy = `hf_gold_${suffix}`;
    const restoredNow = `hf_gnew_${suffix}`;
    try {
      const old = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file: name, database: restoredLegacy } });
      expect((await waitForEnd(server.url, key, old.body.executionId, 120_000)).status).toBe('Success');
      expect(fingerprint(restoredLegacy)).toBe(fingerprint(sourceDb));

      const trigger = await call(server.url, 'POST', '/api/jobs/gzip-job/run', { key });
      const done = await waitForEnd(server.url, key, trigger.body.executionId, 120_000);
      expect(done.status, JSON.stringify(done.logs)).toBe('Success');
      // pg_dump ran with -Z0 and GNU gunzip reads the members as one stream: the dump is uncompressed inside.
      const gunzip = spawnSync('gunzip', ['-c'], { input: await readFile(join(dir, done.path)), maxBuffer: 256 * 1024 * 1024 });
      expect(gunzip.status).toBe(0);
      expect(gunzip.stdout.subarray(0, 5).toString('latin1')).toBe('PGDMP');
      expect(gunzip.stdout.length).toBeGreaterThan(3 * (await legacyPgDump(sourceDb)).length);
      const now = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file: done.path, database: restoredNow } });
      expect((await waitForEnd(server.url, key, now.body.executionId, 120_000)).status).toBe('Success');
      expect(fingerprint(restoredNow)).toBe(fingerprint(sourceDb));
    } finally {
      for (const database of [restoredLegacy, restoredNow]) sql('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    }
  });

  it('backs the same job up with the new defaults and restores it', async () => {
    const trigger = await call(server.url, 'POST', '/api/jobs/zstd-job/run', { key });
    expect(trigger.status).toBe(200);
    const done = await waitForEnd(server.url, key, trigger.body.executionId, 120_000);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    expect(done.path).toMatch(/\.dump\.zst$/);
    const sidecar = JSON.parse(await readFile(join(dir, `${done.path}.meta.json`), 'utf8'));
    expect(sidecar.compression).toEqual({ codec: 'ZSTD', level: 3, extension: '.zst', threads: defaultZstdThreads(), frameBytes: ZSTD_FRAME_BYTES });

    // pg_dump ran with -Z0: the decompressed dump is far larger than pg_dump's own zlib-compressed one.
    const newDump = await throughBinding(new Decompressor(), await readFile(join(dir, done.path)));
    expect(newDump.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    const legacyDump = await legacyPgDump(sourceDb);
    expect(newDump.length).toBeGreaterThan(3 * legacyDump.length);

    const restore = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file: done.path, database: restoredNew } });
    expect(restore.status).toBe(200);
    const restored = await waitForEnd(server.url, key, restore.body.executionId, 120_000);
    expect(restored.status, JSON.stringify(restored.logs)).toBe('Success');
    expect(fingerprint(restoredNew)).toBe(fingerprint(sourceDb));
  });
});
