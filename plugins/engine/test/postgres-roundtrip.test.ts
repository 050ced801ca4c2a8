// Acceptance 1: a real PostgreSQL source (>= 100k rows) backed up through the real HTTP API with an API key, GZIP
// and encryption, to two local destinations (the second stands in for SFTP until storage-sftp exists), then
// restored through POST /api/storage/:id/restore into a new database and compared table by table.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const sql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();

const TABLES = ['customers', 'orders'];
function fingerprint(database: string): Record<string, string> {
  return Object.fromEntries(
    TABLES.map((table) => [table, sql(database, `SELECT count(*) || ':' || md5(string_agg(t::text, ',' ORDER BY id)) FROM ${table} t`)]),
  );
}

describe('PostgreSQL backup and restore through the API (engine on PostgreSQL)', () => {
  const suffix = randomBytes(4).toString('hex');
  const sourceDb = `hf_src_${suffix}`;
  const restoredDb = `hf_restored_${suffix}`;
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dirs: string[];

  beforeAll(async () => {
    sql('postgres', `CREATE DATABASE ${sourceDb}`);
    sql(sourceDb, `CREATE TABLE customers (id int PRIMARY KEY, name text, joined date);
      INSERT INTO customers SELECT g, 'customer ' || g, date '2020-01-01' + (g % 1000) FROM generate_series(1, 100000) g;
      CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers(id), total numeric(10,2));
      INSERT INTO orders SELECT g, 1 + (g % 100000), (g % 997) * 1.25 FROM generate_series(1, 20000) g;`);
    target = await createTarget('postgresql');
    server = await startEngineServer(target);
    dirs = [await mkdtemp(join(tmpdir(), 'hf-local-')), await mkdtemp(join(tmpdir(), 'hf-sftp-standin-'))];
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    for (const dir of dirs ?? []) await rm(dir, { recursive: true, force: true });
    sql('postgres', `DROP DATABASE IF EXISTS ${sourceDb} WITH (FORCE)`);
    sql('postgres', `DROP DATABASE IF EXISTS ${restoredDb} WITH (FORCE)`);
  });

  it('backs up, stores identical copies with sidecars, and restores every row', async () => {
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: dirs[0] } });
    server.catalog.addConfig({ configId: 'sftp-standin', name: 'SFTP stand-in (local)', kind: 'storage', adapterId: 'local', config: { path: dirs[1] } });
    server.catalog.addJob({ id: 'pg-job', name: 'shop', databases: [sourceDb], compression: 'GZIP' }, 'pg', [{ configId: 'local' }, { configId: 'sftp-standin', priority: 5 }], { profileId: 'vault', key: randomBytes(32) });
    const key = await server.apiKey('ci', ['jobs:execute', 'history:read', 'storage:restore']);

    const trigger = await call(server.url, 'POST', '/api/jobs/pg-job/run', { key });
    expect(trigger.status).toBe(200);
    const done = await waitForEnd(server.url, key, trigger.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    expect(done.path).toMatch(/\.dump\.gz\.enc$/);
    const sidecars = await Promise.all(dirs.map(async (dir) => JSON.parse(await readFile(join(dir, `${done.path}.meta.json`), 'utf8'))));
    expect(sidecars[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(sidecars[1].sha256).toBe(sidecars[0].sha256);
    expect(sidecars[0].databases).toEqual([sourceDb]);
    expect(sidecars[0].source.engineVersion).toMatch(/^\d+/);
    for (const dir of dirs) expect((await readdir(dir)).sort()).toEqual([done.path, `${done.path}.meta.json`]);

    const restore = await call(server.url, 'POST', '/api/storage/sftp-standin/restore', { key, json: { file: done.path, database: restoredDb } });
    expect(restore.status).toBe(200);
    const restored = await waitForEnd(server.url, key, restore.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs)).toBe('Success');
    const expected = fingerprint(sourceDb);
    expect(expected.customers).toMatch(/^100000:/);
    expect(fingerprint(restoredDb)).toEqual(expected);
  });
});
