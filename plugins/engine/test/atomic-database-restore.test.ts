// Issue 41, acceptance 2 (database half): a restore of a truncated, bit-flipped or index-tampered backup, plain and
// encrypted, into an existing database fails and leaves that database exactly as it was, with no staging database
// behind. Real PostgreSQL and MariaDB, real engine and HTTP API, backups on local storage damaged on disk.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import sourceMysql from '@holdfast/source-mysql';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const psql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();
const mariadb = (text: string): string => execFileSync('mariadb', ['-h', '127.0.0.1', '-u', 'root', '-N', '-B', '-e', text], { encoding: 'utf8' }).trim();

/** Every row of every table of a database, as one text: equal text, equal database. */
function pgListing(database: string): string {
  const tables = psql(database, `SELECT string_agg(table_name, ' ' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'public'`).split(' ');
  return tables.map((table) => `${table}:${psql(database, `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM "${table}" t`)}`).join(' ');
}
const mariaListing = (database: string): string =>
  mariadb(`SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = '${database}'`) +
  mariadb(`CHECKSUM TABLE ${database}.items`).replace(/\S+\t/, ' ');

type Damage = 'truncated' | 'bit-flipped' | 'index-tampered';

describe('a damaged backup restored over an existing database changes nothing (engine, local storage)', () => {
  const suffix = randomBytes(4).toString('hex');
  const pgSource = `hf_atsrc_${suffix}`;
  const pgTarget = `hf_attgt_${suffix}`;
  const myTarget = `hf_atmy_${suffix}`;
  const mySource = `hf_atmysrc_${suffix}`;
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let storageDir: string;
  let key: string;

  async function run(method: string, path: string, json?: unknown): Promise<any> {
    const trigger = await call(server.url, method, path, { key, json });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId, 180_000);
  }

  /** Damages the stored backup (or its index sidecar) in place; answers how to put the original bytes back. */
  async function damage(file: string, how: Damage): Promise<() => Promise<void>> {
    const path = join(storageDir, how === 'index-tampered' ? `${file}.index.json` : file);
    const original = await readFile(path);
    if (how === 'truncated') await truncate(path, Math.floor(original.length * 0.6));
    else {
      const changed = Buffer.from(original);
      // Index: a byte of the recorded data (a digit or letter of a size or digest); backup: a byte mid-file.
      const at = how === 'index-tampered' ? changed.lastIndexOf('"sha256"') + 12 : Math.floor(changed.length / 2);
      changed[at]! ^= 0x01;
      await writeFile(path, changed);
    }
    return () => writeFile(path, original);
  }

  beforeAll(async () => {
    psql('postgres', `CREATE DATABASE ${pgSource}`);
    psql(pgSource, `CREATE TABLE customers (id int PRIMARY KEY, name text);
      INSERT INTO customers SELECT g, 'customer ' || g || ' ' || md5(g::text) FROM generate_series(1, 60000) g;
      CREATE TABLE orders (id int PRIMARY KEY, total numeric(10,2)); INSERT INTO orders SELECT g, g * 1.5 FROM generate_series(1, 30000) g;`);
    psql('postgres', `CREATE DATABASE ${pgTarget}`);
    psql(pgTarget, `CREATE TABLE customers (id int PRIMARY KEY, name text); INSERT INTO customers VALUES (1, 'the old one');
      CREATE TABLE only_here (v text); INSERT INTO only_here VALUES ('kept until a good restore')`);
    mariadb(`CREATE DATABASE ${mySource}; USE ${mySource}; CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(80));
      INSERT INTO items SELECT seq, CONCAT('item ', seq, ' ', MD5(seq)) FROM seq_1_to_60000;`);
    mariadb(`CREATE DATABASE ${myTarget}; USE ${myTarget}; CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(80));
      INSERT INTO items VALUES (1, 'the old one'); CREATE TABLE only_here (v TEXT);`);
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [sourceMysql] as unknown as AnyAdapterDefinition[] });
    storageDir = await mkdtemp(join(tmpdir(), 'hf-atomic-restore-'));
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'maria', name: 'Local MariaDB', kind: 'source', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: storageDir } });
    const seekable = { format: 'SEEKABLE' as const, fullEveryRuns: null, fullEveryDays: null };
    const vault = { profileId: 'vault', key: randomBytes(32) };
    server.catalog.addJob({ id: 'pg-plain', name: 'pg plain', databases: [pgSource], compression: 'GZIP' }, 'pg', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'pg-plain-enc', name: 'pg plain enc', databases: [pgSource], compression: 'GZIP' }, 'pg', [{ configId: 'disk' }], vault);
    server.catalog.addJob({ id: 'pg-archive', name: 'pg archive', databases: [pgSource], compression: 'GZIP', archive: seekable }, 'pg', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'pg-archive-enc', name: 'pg archive enc', databases: [pgSource], compression: 'GZIP', archive: seekable }, 'pg', [{ configId: 'disk' }], vault);
    server.catalog.addJob({ id: 'maria-plain', name: 'maria plain', databases: [mySource], compression: 'GZIP' }, 'maria', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'maria-plain-enc', name: 'maria plain enc', databases: [mySource], compression: 'GZIP' }, 'maria', [{ configId: 'disk' }], vault);
    key = await server.apiKey('atomic', ['jobs:execute', 'history:read', 'storage:restore']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(storageDir, { recursive: true, force: true });
    for (const name of [pgSource, pgTarget]) psql('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    mariadb(`DROP DATABASE IF EXISTS ${mySource}; DROP DATABASE IF EXISTS ${myTarget}`);
  });

  const cases: Array<{ job: string; engine: 'pg' | 'maria'; damages: Damage[] }> = [
    { job: 'pg-plain', engine: 'pg', damages: ['truncated', 'bit-flipped'] },
    { job: 'pg-plain-enc', engine: 'pg', damages: ['truncated', 'bit-flipped'] },
    { job: 'pg-archive', engine: 'pg', damages: ['truncated', 'bit-flipped', 'index-tampered'] },
    { job: 'pg-archive-enc', engine: 'pg', damages: ['truncated', 'bit-flipped', 'index-tampered'] },
    { job: 'maria-plain', engine: 'maria', damages: ['truncated', 'bit-flipped'] },
    { job: 'maria-plain-enc', engine: 'maria', damages: ['truncated', 'bit-flipped'] },
  ];

  for (const { job, engine, damages } of cases) {
    it(`${job}: ${damages.join(', ')} backups fail and leave the target as it was; the intact backup then replaces it`, async () => {
      const backup = await run('POST', `/api/jobs/${job}/run`);
      expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
      const database = engine === 'pg' ? pgTarget : myTarget;
      const listing = () => (engine === 'pg' ? pgListing(database) : mariaListing(database));
      const workDatabases = () =>
        engine === 'pg'
          ? psql('postgres', `SELECT string_agg(datname, ',') FROM pg_database WHERE datname LIKE '${database}\\_\\_holdfast\\_%'`)
          : mariadb(`SELECT GROUP_CONCAT(schema_name) FROM information_schema.schemata WHERE schema_name LIKE '${database}\\_\\_holdfast\\_%'`);
      const before = listing();
      for (const how of damages) {
        const repair = await damage(backup.path, how);
        const restore = await run('POST', '/api/storage/disk/restore', { file: backup.path, database, overwrite: true });
        await repair();
        expect(restore.status, `${how}: ${JSON.stringify(restore.logs)}`).toBe('Failed');
        expect(listing(), how).toBe(before);
        expect(workDatabases(), how).toMatch(/^(|NULL)$/);
      }
      const good = await run('POST', '/api/storage/disk/restore', { file: backup.path, database, overwrite: true });
      expect(good.status, JSON.stringify(good.logs)).toBe('Success');
      expect(listing()).toBe(engine === 'pg' ? pgListing(pgSource) : mariaListing(mySource));
      // Back to the old content for the next job's damaged restores.
      if (engine === 'pg') psql(database, `DROP TABLE customers, orders; CREATE TABLE customers (id int PRIMARY KEY, name text); INSERT INTO customers VALUES (1, 'the old one'); CREATE TABLE only_here (v text); INSERT INTO only_here VALUES ('kept until a good restore')`);
      else mariadb(`DROP DATABASE ${database}; CREATE DATABASE ${database}; USE ${database}; CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(80)); INSERT INTO items VALUES (1, 'the old one'); CREATE TABLE only_here (v TEXT);`);
    }, 600_000);
  }
});
