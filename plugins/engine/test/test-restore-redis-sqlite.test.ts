// Test restores into a Redis database index and a SQLite scratch file, on the real local Redis (127.0.0.1:6379,
// indexes 5 and 6, which this file flushes) and the sqlite3 CLI: the newest backup is restored, its keys / tables and
// counts are checked against the figures recorded at backup time, the scratch is dropped and the duration recorded.
// Plus the safety rules of a shared Redis (never flush data that is not ours, never the index the job backs up), a
// scratch index a crashed test restore left, and corrupted backups failing with a clear message.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import sourceRedis from '@holdfast/source-redis';
import sourceSqlite from '@holdfast/source-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

/**
 * Projects run in parallel on one Redis: source-redis owns indexes 7, 8 and 10-15, the bench 9. These two belong to
 * this file alone and are flushed here before and after.
 */
const SOURCE_DB = 5;
const SCRATCH_DB = 6;

const redis = (db: number, ...args: string[]): string => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', String(db), ...args], { encoding: 'utf8' }).trim();
const redisScript = (db: number, script: string): void => void execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', String(db)], { input: script, encoding: 'utf8' });
const sqlite = (file: string, sql: string): string => execFileSync('sqlite3', [file, sql], { encoding: 'utf8' }).trim();

describe('test restores into Redis and SQLite scratch targets (engine on libsql, local storage)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let work: string;
  let key: string;
  let dbFile: string;

  const messages = (execution: any): string[] => execution.logs.map((entry: { message: string }) => entry.message);
  async function run(path: string): Promise<any> {
    const trigger = await call(server.url, 'POST', path, { key });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId, 120_000);
  }
  const sidecarOf = async (file: string) => JSON.parse(await readFile(join(work, 'storage', `${file}.meta.json`), 'utf8'));

  beforeAll(async () => {
    redis(SOURCE_DB, 'FLUSHDB');
    redis(SCRATCH_DB, 'FLUSHDB');
    const seed: string[] = [];
    for (let i = 0; i < 300; i++) seed.push(`SET user:${i} "name ${i}"`);
    for (let i = 0; i < 20; i++) seed.push(`HSET cart:${i} item apple count ${i}`);
    for (let i = 0; i < 10; i++) seed.push(`RPUSH queue:${i} a b c`);
    // Keys with an expiry that outlive the test (four short-lived ones are added right before the first backup).
    for (let i = 0; i < 5; i++) seed.push(`SET session:${i} open EX 3600`);
    redisScript(SOURCE_DB, `${seed.join('\n')}\n`);

    work = await mkdtemp(join(tmpdir(), 'hf-test-restore-kv-'));
    await mkdir(join(work, 'storage'));
    await mkdir(join(work, 'scratch'));
    dbFile = join(work, 'app data.sqlite');
    sqlite(
      dbFile,
      `PRAGMA journal_mode = WAL;
       CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) INSERT INTO customers SELECT i, 'customer ' || i FROM n;
       CREATE TABLE "order items" (id INTEGER PRIMARY KEY AUTOINCREMENT, qty INTEGER);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 123) INSERT INTO "order items" (qty) SELECT i FROM n;
       CREATE VIRTUAL TABLE notes USING fts5(body);
       INSERT INTO notes VALUES ('first note'), ('second note');`,
    );

    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [sourceRedis, sourceSqlite] as unknown as AnyAdapterDefinition[] });
    server.catalog.addConfig({ configId: 'cache', name: 'Local Redis', kind: 'source', adapterId: 'redis', config: { host: '127.0.0.1', port: 6379, database: SOURCE_DB } });
    server.catalog.addConfig({ configId: 'cache-rdb', name: 'Redis RDB', kind: 'source', adapterId: 'redis', config: { host: '127.0.0.1', port: 6379, mode: 'rdb' } });
    server.catalog.addConfig({ configId: 'app', name: 'App SQLite', kind: 'source', adapterId: 'sqlite', config: { path: dbFile } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: join(work, 'storage') } });
    server.catalog.addJob({ id: 'redis-job', name: 'cache', databases: [String(SOURCE_DB)], compression: 'GZIP', testRestore: { target: { type: 'redis', database: SCRATCH_DB } } }, 'cache', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'redis-same', name: 'cache same index', databases: [String(SOURCE_DB)], testRestore: { target: { type: 'redis', database: SOURCE_DB } } }, 'cache', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'redis-rdb', name: 'cache rdb', testRestore: { target: { type: 'redis', database: SCRATCH_DB } } }, 'cache-rdb', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'sqlite-job', name: 'app', compression: 'GZIP', testRestore: { target: { type: 'sqlite', path: join(work, 'scratch') } } }, 'app', [{ configId: 'disk' }]);
    key = await server.apiKey('kv', ['jobs:execute', 'jobs:read', 'history:read', 'dashboard:read']);
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (work) await rm(work, { recursive: true, force: true });
    redis(SOURCE_DB, 'FLUSHDB');
    redis(SCRATCH_DB, 'FLUSHDB');
  });

  it('Redis: restores into the scratch index, checks key counts against the backup, flushes the index, records the RTO', async () => {
    // Four keys that are alive when backed up and expire before the test restore. Their life is long enough for the
    // backup to read them on a loaded machine; the test then waits until Redis says they are gone.
    redisScript(SOURCE_DB, [0, 1, 2, 3].map((i) => `SET flash:${i} soon PX 10000`).join('\n') + '\n');
    const backup = await run('/api/jobs/redis-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const recorded = (await sidecarOf(backup.path)).figures.databases[String(SOURCE_DB)];
    expect(recorded.keys - recorded.expires).toBe(330);
    expect(recorded.expires).toBe(9);
    // Let the short-lived keys expire: the restore skips them, and the checks allow for that.
    for (let waited = 0; redis(SOURCE_DB, 'EXISTS', 'flash:0', 'flash:1', 'flash:2', 'flash:3') !== '0'; waited += 250) {
      if (waited > 15_000) throw new Error('the short-lived keys did not expire');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const tested = await run('/api/jobs/redis-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(tested.path).toBe(backup.path);
    expect(messages(tested)).toContain(`test restore of ${backup.path} (created ${(await sidecarOf(backup.path)).createdAt}) from Disk into database ${SCRATCH_DB} of Local Redis`);
    expect(messages(tested)).toContain('restore: 4 key(s) had expired since the backup and were not restored');
    expect(messages(tested)).toContain(`check database ${SOURCE_DB}: key counts: ok (330 keys without expiry restored, 330 recorded; 5 keys with an expiry restored, at most 9 recorded (expired ones are not restored))`);
    expect(messages(tested)).toContain(`scratch removed: database ${SCRATCH_DB} of Local Redis`);
    expect(redis(SCRATCH_DB, 'DBSIZE')).toBe('0');
    // The source index was only read.
    expect(redis(SOURCE_DB, 'GET', 'user:7')).toBe('name 7');
    const time = await call(server.url, 'GET', '/api/jobs/redis-job/restore-time', { key });
    expect(time.body.data).toMatchObject({ jobId: 'redis-job', measuredExecutionId: tested.id });
    expect(time.body.data.measuredRestoreMs).toBeGreaterThan(0);

    // Figures that do not match what comes back fail the key check.
    const sidecarPath = join(work, 'storage', `${backup.path}.meta.json`);
    const sidecar = await sidecarOf(backup.path);
    await writeFile(sidecarPath, JSON.stringify({ ...sidecar, figures: { databases: { [String(SOURCE_DB)]: { keys: recorded.keys + 5, expires: recorded.expires } } } }));
    const short = await run('/api/jobs/redis-job/test-restore');
    expect(short.status).toBe('Failed');
    expect(short.error).toMatch(new RegExp(`^test restore failed: test restore checks failed: database ${SOURCE_DB}: key counts \\(330 keys without expiry restored, 335 recorded;`));
    expect(redis(SCRATCH_DB, 'DBSIZE')).toBe('0');
    await writeFile(sidecarPath, JSON.stringify(sidecar));
  });

  it('Redis: data that is not ours in the scratch index is never flushed; the index the job backs up is refused', async () => {
    redis(SCRATCH_DB, 'SET', 'someone:else', 'keep me');
    const refused = await run('/api/jobs/redis-job/test-restore');
    expect(refused.status).toBe('Failed');
    expect(refused.error).toBe(
      `test restore failed: database ${SCRATCH_DB} of Local Redis holds 1 key(s) that no test restore of this installation left: a scratch index must be empty (it is flushed after each test restore); empty it or name another index`,
    );
    expect(redis(SCRATCH_DB, 'GET', 'someone:else')).toBe('keep me');
    redis(SCRATCH_DB, 'DEL', 'someone:else');

    const backup = await run('/api/jobs/redis-same/run');
    expect(backup.status).toBe('Success');
    const same = await run('/api/jobs/redis-same/test-restore');
    expect(same.status).toBe('Failed');
    expect(same.error).toBe(`test restore failed: database ${SOURCE_DB} of Local Redis is the database this job backs up; name an index reserved for test restores (testRestore.target.database)`);
    expect(redis(SOURCE_DB, 'DBSIZE')).not.toBe('0');

    const rdb = await run('/api/jobs/redis-rdb/test-restore');
    expect(rdb.status).toBe('Failed');
    expect(rdb.error).toMatch(/^test restore failed: the job's source "[^"]+" cannot take part in test restores: \[source-redis\] backups in rdb mode cannot be test-restored: an RDB snapshot cannot be restored into a running server/);
  });

  it('Redis: a scratch index a crashed test restore left (its marker names an ended execution) is flushed first', async () => {
    const ended = (await run('/api/jobs/redis-job/run')).id;
    redisScript(SCRATCH_DB, `SET holdfast:test-restore ${ended}\nSET half:restored 1\nSET half:restored:2 2\n`);
    const tested = await run('/api/jobs/redis-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain(`flushed database ${SCRATCH_DB} of Local Redis left by the interrupted test restore ${ended}`);
    expect(redis(SCRATCH_DB, 'DBSIZE')).toBe('0');
  });

  it('Redis: a corrupted backup fails with a clear message and leaves the scratch index empty', async () => {
    const backup = await run('/api/jobs/redis-job/run');
    const path = join(work, 'storage', backup.path);
    const data = await readFile(path);
    data[Math.floor(data.length / 2)]! ^= 0x10;
    await writeFile(path, data);
    const tested = await run('/api/jobs/redis-job/test-restore');
    expect(tested.status).toBe('Failed');
    expect(tested.error).toMatch(/^test restore failed: (the backup file is corrupted: )?checksum mismatch: the (stored )?file's SHA-256 is [0-9a-f]{64}, the sidecar records [0-9a-f]{64}/);
    expect(redis(SCRATCH_DB, 'DBSIZE')).toBe('0');
  });

  it('SQLite: restores into a throwaway file, checks integrity, tables and row counts, removes it, records the RTO', async () => {
    const backup = await run('/api/jobs/sqlite-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const figures = (await sidecarOf(backup.path)).figures.databases[dbFile];
    expect(figures).toMatchObject({ customers: 2500, 'order items': 123 });
    // The FTS5 table itself is not counted (its module may be missing where counts are read); its shadow tables are.
    expect(figures).not.toHaveProperty('notes');
    expect(figures).toHaveProperty('notes_content', 2);
    expect(figures).not.toHaveProperty('sqlite_sequence');

    // A scratch folder left by an execution of ours that has ended is removed; anything else there is kept.
    const leftover = join(work, 'scratch', `holdfast-test-restore-${backup.id.replace(/-/g, '').slice(0, 12)}-left`);
    await mkdir(leftover);
    await writeFile(join(work, 'scratch', 'unrelated.sqlite'), 'kept');
    const tested = await run('/api/jobs/sqlite-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain(`removed folder ${leftover} left by an interrupted test restore`);
    expect(messages(tested)).toContain('check integrity_check: ok (ok)');
    expect(messages(tested)).toContain(`check ${dbFile}: tables present: ok (${Object.keys(figures).length} tables)`);
    expect(messages(tested)).toContainEqual(expect.stringMatching(new RegExp(`^check ${dbFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: row counts: ok \\(\\d+ rows in \\d+ tables match\\)$`)));
    expect(messages(tested)).toContainEqual(expect.stringMatching(/^scratch removed: file .*\/holdfast-test-restore-[0-9a-f]{12}-\w+\/app data\.sqlite$/));
    expect(await readdir(join(work, 'scratch'))).toEqual(['unrelated.sqlite']);
    // The source file was only read.
    expect(sqlite(dbFile, 'SELECT count(*) FROM customers')).toBe('2500');
    const time = await call(server.url, 'GET', '/api/jobs/sqlite-job/restore-time', { key });
    expect(time.body.data.measuredRestoreMs).toBeGreaterThan(0);
  });

  it('SQLite: a corrupted backup fails with a clear message and leaves no scratch behind', async () => {
    const files = (await readdir(join(work, 'storage'))).filter((name) => name.startsWith('app_') && name.endsWith('.sqlite.gz'));
    const path = join(work, 'storage', files.sort().at(-1)!);
    const data = await readFile(path);
    data[Math.floor(data.length / 2)]! ^= 0x01;
    await writeFile(path, data);
    const tested = await run('/api/jobs/sqlite-job/test-restore');
    expect(tested.status).toBe('Failed');
    expect(tested.error).toMatch(/^test restore failed: (the backup file is corrupted: )?checksum mismatch/);
    expect(await readdir(join(work, 'scratch'))).toEqual(['unrelated.sqlite']);
  });
});
