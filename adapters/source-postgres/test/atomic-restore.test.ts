// Issue 41: a restore into an existing database that failed halfway left it half-replaced. Restores now go into a
// staging database swapped in only on success (docs/security.md, "Atomic database restores").
import { Readable } from 'node:stream';
import pg from 'pg';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { failingAfterShare, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { workName } from '../src/internal/staged-restore.js';
import { checksums, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';

const created: string[] = [];
async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}
const source = (overrides: Record<string, unknown> = {}): SourceAdapter => instantiateAdapter(container, definition, { ...server, ...overrides });
const signal = () => new AbortController().signal;

/** Databases a restore works in, left over for `target`. */
async function workDatabases(target: string): Promise<string[]> {
  const rows = await sql<{ datname: string }>('postgres', `SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${target.slice(0, 20)}%__holdfast_%`]);
  return rows.map((row) => row.datname);
}

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
});

describe('atomic PostgreSQL restores against the local PostgreSQL', () => {
  let seeded: string;
  let expected: Record<string, string>;
  let dump: Buffer;

  beforeAll(async () => {
    seeded = await database('atomsrc');
    expected = await seed(seeded, 20000);
    const handle = await source().dump({ databases: [seeded], signal: signal(), engineOptions: { pgCompression: '0' } });
    dump = await readAll(handle.stream);
    await handle.done;
  });

  /** An existing database with other content than the backup. */
  async function existingTarget(label: string): Promise<{ name: string; before: Record<string, string> }> {
    const name = await database(label);
    await sql(name, `CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT g, 'old ' || g FROM generate_series(1, 50) g`);
    await sql(name, `CREATE TABLE keep_me (v text); INSERT INTO keep_me VALUES ('only in the old database')`);
    return { name, before: await checksums(name) };
  }

  it('a restore over an existing database that fails halfway leaves it untouched and no staging database behind', async () => {
    const { name, before } = await existingTarget('atomfail');
    await expect(source().restore(failingAfterShare(dump, 0.7), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await checksums(name)).toEqual(before);
    expect(await workDatabases(name)).toEqual([]);
  });

  it('a truncated dump and a bit-flipped dump fail without touching the existing database', async () => {
    const { name, before } = await existingTarget('atomdmg');
    const truncated = dump.subarray(0, Math.floor(dump.length * 0.8));
    await expect(source().restore(Readable.from([truncated]), { target: { database: name }, signal: signal() })).rejects.toThrow();
    const flipped = Buffer.from(dump);
    // A flip in the table of contents makes pg_restore fail after it created objects.
    flipped[Math.floor(dump.length * 0.5)]! ^= 0xff;
    flipped[Math.floor(dump.length * 0.95)]! ^= 0xff;
    await source().restore(Readable.from([flipped]), { target: { database: name }, signal: signal() }).catch(() => undefined);
    // Whatever pg_restore made of the flipped bytes, the database is either untouched or wholly replaced.
    const after = await checksums(name);
    expect([JSON.stringify(before), JSON.stringify(expected)]).toContain(JSON.stringify(after));
    expect(await workDatabases(name)).toEqual([]);
    expect(await checksums(name)).toEqual(after);
  });

  it('a restore that succeeds replaces the database whole (objects not in the backup go) and keeps its properties', async () => {
    const { name } = await existingTarget('atomok');
    await sql('postgres', `COMMENT ON DATABASE "${name}" IS 'billing, do not drop'`);
    await sql('postgres', `ALTER DATABASE "${name}" SET search_path = "$user", public, extra`);
    await sql('postgres', `ALTER DATABASE "${name}" CONNECTION LIMIT 40`);
    // A session left open on the target is ended by the swap instead of blocking it.
    const idle = new pg.Client({ ...server, database: name });
    idle.on('error', () => undefined);
    await idle.connect();
    const result = await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal() });
    await idle.end().catch(() => undefined);
    expect(result.warnings).toEqual([]);
    expect(await checksums(name)).toEqual(expected);
    expect(await workDatabases(name)).toEqual([]);
    const [facts] = await sql<{ comment: string; limit: number; config: string[] }>(
      'postgres',
      `SELECT shobj_description(d.oid, 'pg_database') AS comment, d.datconnlimit AS limit, s.setconfig AS config
       FROM pg_database d LEFT JOIN pg_db_role_setting s ON s.setdatabase = d.oid AND s.setrole = 0 WHERE d.datname = $1`,
      [name],
    );
    expect(facts).toEqual({ comment: 'billing, do not drop', limit: 40, config: ['search_path="$user", public, extra'] });
  });

  it('a multi-database restore whose second database fails leaves both targets untouched', async () => {
    const second = await database('atomsec');
    await seed(second, 3000);
    const handle = await source().dump({ databases: [seeded, second], signal: signal() });
    const bytes = await readAll(handle.stream);
    const first = await existingTarget('atomm1');
    const other = await existingTarget('atomm2');
    const mapping = { [seeded]: first.name, [second]: other.name };
    await expect(source().restore(failingAfterShare(bytes, 0.97), { target: { databaseMapping: mapping }, signal: signal() })).rejects.toThrow();
    expect(await checksums(first.name)).toEqual(first.before);
    expect(await checksums(other.name)).toEqual(other.before);
    expect(await workDatabases(first.name)).toEqual([]);
    expect(await workDatabases(other.name)).toEqual([]);
  }, 180_000);

  it('with restoreClean off, a failing merge into an existing database rolls back whole', async () => {
    const { name } = await existingTarget('atommerge');
    await sql(name, `DROP TABLE items`);
    const before = await checksums(name);
    await expect(source({ restoreClean: false }).restore(failingAfterShare(dump, 0.7), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await checksums(name)).toEqual(before);
    expect(await workDatabases(name)).toEqual([]);
  });

  it('listDatabases leaves out staging and set-aside databases (a backup of all databases never takes one)', async () => {
    const leftover = `${seeded.slice(0, 20)}__holdfast_staging_0123abcd`;
    created.push(leftover);
    await sql('postgres', `CREATE DATABASE "${leftover}"`);
    const names = await source().listDatabases();
    expect(names).toContain(seeded);
    expect(names).not.toContain(leftover);
  });

  it('cuts work names to 63 bytes on a character boundary', () => {
    const long = `${'é'.repeat(40)}x`;
    const staging = workName(long, '__holdfast_staging_', '0123abcd');
    expect(Buffer.byteLength(staging)).toBeLessThanOrEqual(63);
    expect(staging).toMatch(/^é+__holdfast_staging_0123abcd$/);
  });
});
