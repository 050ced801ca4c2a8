// Issue 47, item 1 (API half): a restore never writes over existing data by accident. Without `overwrite: true`,
// POST /api/storage/:id/restore answers 409 and queues nothing when a target database exists (named, mapped, or the
// original name an empty target means), when targetPath is a folder that is not empty, or for restoreToOriginalPaths;
// an unreachable target source is a 502 naming it. GET /api/adapters/:id/databases lists a source's databases with
// their sizes. Real PostgreSQL and MariaDB, real engine and HTTP API, backups on local storage.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAdapterDefinition, RestoreOptions, RestoreTarget } from '@holdfast/kernel';
import { defineSourceAdapter, inject, injectable, TOKENS, z, type DumpHandle } from '@holdfast/sdk';
import sourceDirectory from '@holdfast/source-directory';
import sourceMysql from '@holdfast/source-mysql';
import sourcePostgres from '@holdfast/source-postgres';
import { plannedDatabases } from '../src/restore/restore-preflight.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const psql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();
const mariadb = (text: string): string => execFileSync('mariadb', ['-h', '127.0.0.1', '-u', 'root', '-N', '-B', '-e', text], { encoding: 'utf8' }).trim();

describe('which databases a restore writes into (what an empty target means)', () => {
  it('resolves names as the sources do', () => {
    expect(plannedDatabases(['shop'], {})).toEqual(['shop']);
    expect(plannedDatabases(['shop'], { database: 'copy' })).toEqual(['copy']);
    expect(plannedDatabases(['shop'], { databaseMapping: { shop: 'copy' } })).toEqual(['copy']);
    expect(plannedDatabases(['a', 'b'], { databaseMapping: { a: 'a2' } })).toEqual(['a2', 'b']);
    expect(plannedDatabases(['a', 'b'], {})).toEqual(['a', 'b']);
    expect(plannedDatabases(['a', 'b'], { paths: ['b'], databaseMapping: { b: 'b2' } })).toEqual(['b2']);
    expect(plannedDatabases([], {})).toEqual([]);
  });
});

// A source restored into itself, as a Docker volume is (no database name to list, no targetPath to look at): only the
// source can say whether its target holds data, through `restoreWouldReplace`.
const selfTargetConfig = z.object({ folder: z.string() });
@injectable()
class SelfTargetSource {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof selfTargetConfig>) {}
  async check() {
    return { ok: true, message: 'self-target' };
  }
  async detectVersion() {
    return { version: '1.0' };
  }
  async listDatabases() {
    return ['self'];
  }
  async dump(): Promise<DumpHandle> {
    return { stream: Readable.from([Buffer.from('restored bytes\n')]), done: Promise.resolve({ bytes: 15, databases: ['self'], warnings: [] }), extension: '.bin' };
  }
  async restoreWouldReplace(_target: RestoreTarget): Promise<string[]> {
    return (await readdir(this.config.folder)).length > 0 ? ['self-folder'] : [];
  }
  async restore(stream: Readable) {
    await writeFile(join(this.config.folder, 'restored.bin'), stream);
    return { warnings: [] };
  }
}
const selfTargetSource = defineSourceAdapter({
  id: 'self-target',
  displayName: 'Restored into itself (test only)',
  configSchema: selfTargetConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: true, fileArchive: true },
  implementation: SelfTargetSource,
});

describe('safe restores through the API (engine, real PostgreSQL and MariaDB)', () => {
  const suffix = randomBytes(4).toString('hex');
  const pgSource = `hf_safesrc_${suffix}`;
  const pgOther = `hf_safeoth_${suffix}`;
  const pgNew = `hf_safenew_${suffix}`;
  const pgRace = `hf_saferace_${suffix}`;
  const mySource = `hf_safemy_${suffix}`;
  const myNew = `hf_safemynew_${suffix}`;
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let storageDir: string;
  let work: string;
  let key: string;
  let readKey: string;

  const restore = (json: Record<string, unknown>) => call(server.url, 'POST', '/api/storage/disk/restore', { key, json });
  const restoreCount = async () => (await call(server.url, 'GET', '/api/history?type=Restore&limit=100', { key })).body.total as number;
  async function backup(job: string): Promise<string> {
    const trigger = await call(server.url, 'POST', `/api/jobs/${job}/run`, { key });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    const done = await waitForEnd(server.url, key, trigger.body.executionId, 180_000);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    return done.path as string;
  }
  async function restored(json: Record<string, unknown>): Promise<any> {
    const answer = await restore(json);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return waitForEnd(server.url, key, answer.body.executionId, 180_000);
  }

  beforeAll(async () => {
    psql('postgres', `CREATE DATABASE ${pgSource}`);
    psql(pgSource, `CREATE TABLE customers (id int PRIMARY KEY, name text); INSERT INTO customers SELECT g, 'customer ' || g FROM generate_series(1, 5000) g;`);
    psql('postgres', `CREATE DATABASE ${pgOther}`);
    psql(pgOther, `CREATE TABLE only_here (v text); INSERT INTO only_here VALUES ('old')`);
    mariadb(`CREATE DATABASE ${mySource}; USE ${mySource}; CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(80)); INSERT INTO items SELECT seq, CONCAT('item ', seq) FROM seq_1_to_3000;`);
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [sourceMysql, sourceDirectory, selfTargetSource] as unknown as AnyAdapterDefinition[] });
    storageDir = await mkdtemp(join(tmpdir(), 'hf-safe-restore-'));
    work = await mkdtemp(join(tmpdir(), 'hf-safe-restore-work-'));
    await mkdir(join(work, 'data'));
    await writeFile(join(work, 'data', 'a.txt'), 'from the backup\n');
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'pg-down', name: 'PostgreSQL that is down', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', port: 1, user: 'root' } });
    server.catalog.addConfig({ configId: 'maria', name: 'Local MariaDB', kind: 'source', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'files', name: 'Files', kind: 'source', adapterId: 'directory', config: { paths: [join(work, 'data')] } });
    server.catalog.addConfig({ configId: 'gen', name: 'Generated', kind: 'source', adapterId: 'generated', config: {} });
    await mkdir(join(work, 'self'));
    server.catalog.addConfig({ configId: 'self', name: 'Self target', kind: 'source', adapterId: 'self-target', config: { folder: join(work, 'self') } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: storageDir } });
    server.catalog.addJob({ id: 'pg-job', name: 'pg', databases: [pgSource], compression: 'GZIP' }, 'pg', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'maria-job', name: 'maria', databases: [mySource], compression: 'GZIP' }, 'maria', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'files-job', name: 'files', compression: 'GZIP' }, 'files', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'self-job', name: 'self', compression: 'GZIP' }, 'self', [{ configId: 'disk' }]);
    key = await server.apiKey('safe', ['jobs:execute', 'history:read', 'storage:restore', 'sources:read']);
    readKey = await server.apiKey('reader', ['history:read']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(storageDir, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
    for (const name of [pgSource, pgOther, pgNew, pgRace]) psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    mariadb(`DROP DATABASE IF EXISTS ${mySource}; DROP DATABASE IF EXISTS ${myNew}`);
  });

  it('GET /api/adapters/:id/databases lists PostgreSQL and MariaDB databases with their sizes', async () => {
    const pg = await call(server.url, 'GET', '/api/adapters/pg/databases', { key });
    expect(pg.status, JSON.stringify(pg.body)).toBe(200);
    const pgEntry = pg.body.databases.find((entry: { name: string }) => entry.name === pgSource);
    expect(pgEntry.sizeBytes).toBeGreaterThan(0);
    expect(Number(psql('postgres', `SELECT pg_database_size('${pgSource}')`))).toBe(pgEntry.sizeBytes);
    const maria = await call(server.url, 'GET', '/api/adapters/maria/databases', { key });
    expect(maria.status, JSON.stringify(maria.body)).toBe(200);
    const myEntry = maria.body.databases.find((entry: { name: string }) => entry.name === mySource);
    expect(myEntry.sizeBytes).toBeGreaterThan(0);
    expect(maria.body.databases.map((entry: { name: string }) => entry.name)).not.toContain('information_schema');
    // A source without sizes: names, sizes null.
    const generated = await call(server.url, 'GET', '/api/adapters/gen/databases', { key });
    expect(generated.body).toEqual({ databases: [{ name: 'generated', sizeBytes: null }] });
  });

  it('GET /api/adapters/:id/databases answers hostile ids and an unreachable source clearly, never 500', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['/api/adapters/nope/databases', 404, /not found/i],
      ['/api/adapters/disk/databases', 400, /"Disk" is a storage destination, not a source/],
      [`/api/adapters/${'x'.repeat(65)}/databases`, 400, /./],
      ['/api/adapters/%00/databases', 400, /./],
      ['/api/adapters/pg-down/databases', 502, /Source "PostgreSQL that is down" could not be reached/],
    ];
    for (const [path, status, message] of cases) {
      const answer = await call(server.url, 'GET', path, { key });
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(answer.body.error, path).toMatch(message);
    }
    expect((await call(server.url, 'GET', '/api/adapters/pg/databases', { key: readKey })).status).toBe(403);
  });

  it('PostgreSQL: an existing target (named, or the original name of an empty target) answers 409 and queues nothing', async () => {
    const file = await backup('pg-job');
    psql(pgSource, `INSERT INTO customers VALUES (999999, 'added after the backup')`);
    const before = await restoreCount();
    for (const body of [{ file }, { file, database: pgSource }, { file, database: pgOther }, { file, databaseMapping: { [pgSource]: pgOther } }, { file, database: pgOther, overwrite: false }]) {
      const answer = await restore(body);
      expect(answer.status, JSON.stringify(body)).toBe(409);
      expect(answer.body.error).toMatch(/already exists on source "Local PostgreSQL": the restore would drop it and replace it with the backup\. Send "overwrite": true/);
      expect(answer.body.error).toContain(body.database ?? (body.databaseMapping ? pgOther : pgSource));
    }
    expect(await restoreCount()).toBe(before);
    expect(psql(pgSource, 'SELECT count(*) FROM customers')).toBe('5001');
    expect(psql(pgOther, 'SELECT v FROM only_here')).toBe('old');
    // The target source unreachable: 502 naming it, nothing queued.
    const down = await restore({ file, database: pgNew, targetSourceId: 'pg-down' });
    expect(down.status).toBe(502);
    expect(down.body.error).toMatch(/Source "PostgreSQL that is down" could not be reached/);
    expect(await restoreCount()).toBe(before);
  }, 300_000);

  it('PostgreSQL: a new name restores and leaves the original intact; overwrite: true replaces, an empty target meaning the original name', async () => {
    const file = await backup('pg-job');
    psql(pgSource, `INSERT INTO customers VALUES (888888, 'added after the second backup')`);
    const fresh = await restored({ file, database: pgNew });
    expect(fresh.status, JSON.stringify(fresh.logs)).toBe('Success');
    expect(psql(pgNew, 'SELECT count(*) FROM customers')).toBe('5001');
    expect(psql(pgSource, 'SELECT count(*) FROM customers')).toBe('5002');
    const replaced = await restored({ file, databaseMapping: { [pgSource]: pgOther }, overwrite: true });
    expect(replaced.status, JSON.stringify(replaced.logs)).toBe('Success');
    expect(psql(pgOther, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_here'`)).toBe('0');
    expect(psql(pgOther, 'SELECT count(*) FROM customers')).toBe('5001');
    // The empty target is the original name (it failed with "restore needs a target database name" before).
    const original = await restored({ file, overwrite: true });
    expect(original.status, JSON.stringify(original.logs)).toBe('Success');
    expect(psql(pgSource, 'SELECT count(*) FROM customers')).toBe('5001');
  }, 300_000);

  it('MariaDB: an existing database answers 409; a new name restores; overwrite: true replaces', async () => {
    const file = await backup('maria-job');
    mariadb(`INSERT INTO ${mySource}.items VALUES (999999, 'added after the backup')`);
    const before = await restoreCount();
    for (const body of [{ file }, { file, database: mySource }]) {
      const answer = await restore(body);
      expect(answer.status, JSON.stringify(body)).toBe(409);
      expect(answer.body.error).toContain(`"${mySource}" already exists on source "Local MariaDB"`);
    }
    expect(await restoreCount()).toBe(before);
    expect(mariadb(`SELECT COUNT(*) FROM ${mySource}.items`)).toBe('3001');
    const fresh = await restored({ file, database: myNew });
    expect(fresh.status, JSON.stringify(fresh.logs)).toBe('Success');
    expect(mariadb(`SELECT COUNT(*) FROM ${myNew}.items`)).toBe('3000');
    expect(mariadb(`SELECT COUNT(*) FROM ${mySource}.items`)).toBe('3001');
    const replaced = await restored({ file, overwrite: true });
    expect(replaced.status, JSON.stringify(replaced.logs)).toBe('Success');
    expect(mariadb(`SELECT COUNT(*) FROM ${mySource}.items`)).toBe('3000');
  }, 300_000);

  it('folders: a non-empty targetPath and restoreToOriginalPaths answer 409 without overwrite; an empty or new folder restores', async () => {
    const file = await backup('files-job');
    const busy = join(work, 'busy');
    await mkdir(busy);
    await writeFile(join(busy, 'keep.txt'), 'mine\n');
    const before = await restoreCount();
    const refused = await restore({ file, targetPath: busy });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(new RegExp(`The folder "${busy}" is not empty.*"overwrite": true`));
    const original = await restore({ file, restoreToOriginalPaths: true });
    expect(original.status).toBe(409);
    expect(original.body.error).toMatch(/restoreToOriginalPaths writes over the folders source "Files" backs up.*"overwrite": true/);
    expect(await restoreCount()).toBe(before);
    expect(await readdir(busy)).toEqual(['keep.txt']);

    const empty = join(work, 'empty');
    await mkdir(empty);
    for (const into of [empty, join(work, 'new', 'folder')]) {
      const run = await restored({ file, targetPath: into });
      expect(run.status, JSON.stringify(run.logs)).toBe('Success');
    }
    const merged = await restored({ file, targetPath: busy, overwrite: true });
    expect(merged.status, JSON.stringify(merged.logs)).toBe('Success');
    expect(await readFile(join(busy, 'keep.txt'), 'utf8')).toBe('mine\n');
    await writeFile(join(work, 'data', 'a.txt'), 'changed since\n');
    const back = await restored({ file, restoreToOriginalPaths: true, overwrite: true });
    expect(back.status, JSON.stringify(back.logs)).toBe('Success');
    expect(await readFile(join(work, 'data', 'a.txt'), 'utf8')).toBe('from the backup\n');
  }, 300_000);
  it('PostgreSQL: a database created after the 409 check passed (queued, before the restore starts) is not replaced; the run carries the request\'s overwrite', async () => {
    const rows = psql(pgSource, 'SELECT count(*) FROM customers');
    const file = await backup('pg-job');
    // The restore of the real PostgreSQL source, held until the test let it go, recording the options it was given.
    const prototype = sourcePostgres.implementation.prototype as { restore(stream: Readable, options: RestoreOptions): Promise<unknown> };
    const original = prototype.restore;
    const seen: Array<boolean | undefined> = [];
    let release!: () => void;
    let gate = new Promise<void>((resolve) => (release = resolve));
    prototype.restore = async function held(this: unknown, stream: Readable, options: RestoreOptions) {
      seen.push(options.overwrite);
      await gate;
      return original.call(this, stream, options);
    };
    try {
      const answer = await restore({ file, database: pgRace });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      for (let tries = 0; seen.length === 0; tries++) {
        if (tries > 600) throw new Error('the restore never started');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      psql('postgres', `CREATE DATABASE ${pgRace}`);
      psql(pgRace, `CREATE TABLE made_meanwhile (v text); INSERT INTO made_meanwhile VALUES ('keep me')`);
      release();
      const run = await waitForEnd(server.url, key, answer.body.executionId, 180_000);
      expect(run.status, JSON.stringify(run.logs)).toBe('Failed');
      expect(JSON.stringify(run.logs)).toContain(`the database \\"${pgRace}\\" exists now and the restore request did not allow replacing it`);
      expect(seen).toEqual([false]);
      expect(psql(pgRace, 'SELECT v FROM made_meanwhile')).toBe('keep me');
      expect(psql('postgres', `SELECT count(*) FROM pg_database WHERE datname LIKE '${pgRace}%__holdfast_%'`)).toBe('0');
      // With overwrite: true the run says so, and replaces it.
      gate = Promise.resolve();
      const replaced = await restored({ file, database: pgRace, overwrite: true });
      expect(replaced.status, JSON.stringify(replaced.logs)).toBe('Success');
      expect(seen).toEqual([false, true]);
      expect(psql(pgRace, 'SELECT count(*) FROM customers')).toBe(rows);
      expect(psql(pgRace, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'made_meanwhile'`)).toBe('0');
    } finally {
      prototype.restore = original;
      release();
    }
  }, 300_000);

  it('a source restored into itself (a volume) that holds data answers 409 without overwrite, naming it; empty, or with overwrite, it restores', async () => {
    const file = await backup('self-job');
    await writeFile(join(work, 'self', 'live.txt'), 'live data\n');
    const before = await restoreCount();
    for (const body of [{ file }, { file, overwrite: false }]) {
      const refused = await restore(body);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body.error).toMatch(/"self-folder" on source "Self target" is not empty: the restore would write over it.*Send "overwrite": true/);
    }
    expect(await restoreCount()).toBe(before);
    expect(await readdir(join(work, 'self'))).toEqual(['live.txt']);
    const over = await restored({ file, overwrite: true });
    expect(over.status, JSON.stringify(over.logs)).toBe('Success');
    await rm(join(work, 'self'), { recursive: true });
    await mkdir(join(work, 'self'));
    const fresh = await restored({ file });
    expect(fresh.status, JSON.stringify(fresh.logs)).toBe('Success');
    expect(await readFile(join(work, 'self', 'restored.bin'), 'utf8')).toBe('restored bytes\n');
  }, 300_000);
});
