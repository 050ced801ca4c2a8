// Issue 41: a restore into an existing database that failed halfway left it half-replaced. Restores now go into a
// staging schema whose tables one RENAME TABLE swaps in on success (docs/security.md, "Atomic database restores").
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import mysql from 'mysql2/promise';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { failingAfterShare, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { workName } from '../src/internal/staged-restore.js';
import { createDatabase, definitions, dropDatabases, seed, server, sql, tableRows } from './helpers.js';

const created: string[] = [];
async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}
const source = (): SourceAdapter => instantiateAdapter(container, definition, { ...server });
const signal = () => new AbortController().signal;

/** Everything a restore could change: rows, and the definition of every table, view, trigger, routine and event. */
async function snapshot(name: string): Promise<unknown> {
  const views = await sql<{ name: string }>('SELECT table_name AS name FROM information_schema.views WHERE table_schema = ? ORDER BY 1', [name]);
  return { rows: await tableRows(name), definitions: await definitions(name), views: views.map((view) => view.name) };
}

/** Schemas a restore works in, left over for `target`. */
async function workSchemas(target: string): Promise<string[]> {
  const rows = await sql<{ name: string }>('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name LIKE ?', [`${target.slice(0, 20)}%\\_\\_holdfast\\_%`]);
  return rows.map((row) => row.name);
}

afterAll(async () => {
  await dropDatabases(...created);
});

describe('atomic MySQL/MariaDB restores against the local MariaDB', () => {
  let seeded: string;
  let dump: Buffer;

  beforeAll(async () => {
    // The client's option files go to a directory of this file's own: mysql-source.test.ts counts those in the shared
    // temporary directory while its dumps run, and the restores here would otherwise show up in its count.
    process.env.TMPDIR = mkdtempSync(path.join(tmpdir(), 'hf-atomic-mysql-'));
    seeded = await database('atomsrc');
    await seed(seeded, 3000);
    // A foreign key (its name is unique per schema) and a view (a view cannot change schema) make the swap work for it.
    await sql('CREATE TABLE tags (id INT PRIMARY KEY, item_id INT, CONSTRAINT fk_tag_item FOREIGN KEY (item_id) REFERENCES items (id)) ENGINE=InnoDB', [], seeded);
    await sql('INSERT INTO tags VALUES (1, 1), (2, 2)', [], seeded);
    await sql('CREATE VIEW item_names AS SELECT id, name FROM items', [], seeded);
    // A view made by a client with another character set (as the mariadb CLI of MariaDB 10.x, utf8mb3): the server
    // stores that context with it, and a restore must bring it back (the container image test found it lost).
    const utf8mb3 = await mysql.createConnection({ ...server, database: seeded, charset: 'UTF8_GENERAL_CI' });
    await utf8mb3.query("CREATE VIEW item_labels AS SELECT id, concat('item ', name) AS label FROM items").finally(() => utf8mb3.end());
    const handle = await source().dump({ databases: [seeded], signal: signal() });
    dump = await readAll(handle.stream);
    await handle.done;
  });

  /** A previous restore of the same backup, since changed: same trigger, routine, view and foreign key names. */
  async function existingTarget(label: string): Promise<{ name: string; before: unknown }> {
    const name = await database(label);
    await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal() });
    await sql('DELETE FROM tags WHERE id = 2', [], name);
    await sql('DELETE FROM items WHERE id > 2000', [], name);
    await sql("CREATE TABLE keep_me (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB", [], name);
    await sql("INSERT INTO keep_me VALUES (1, 'only in the old database')", [], name);
    return { name, before: await snapshot(name) };
  }

  it('a restore over an existing database that fails halfway leaves it untouched and no staging schema behind', async () => {
    const { name, before } = await existingTarget('atomfail');
    await expect(source().restore(failingAfterShare(dump, 0.6), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await snapshot(name)).toEqual(before);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('a truncated dump and a bit-flipped dump fail without touching the existing database', async () => {
    const { name, before } = await existingTarget('atomdmg');
    await expect(source().restore(Readable.from([dump.subarray(0, Math.floor(dump.length * 0.7))]), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await snapshot(name)).toEqual(before);
    const flipped = Buffer.from(dump);
    // A statement keyword broken in the middle of the data ("XNSERT"): the client fails there.
    const at = flipped.indexOf('INSERT INTO', Math.floor(dump.length / 2));
    flipped[at] = 0x58;
    await expect(source().restore(Readable.from([flipped]), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await snapshot(name)).toEqual(before);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('a restore that succeeds replaces the database: rows, view, trigger, routines and event as backed up, other tables gone', async () => {
    const { name } = await existingTarget('atomok');
    await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal() });
    expect(await tableRows(name)).toEqual(await tableRows(seeded));
    expect(await definitions(name)).toEqual(await definitions(seeded));
    expect(await sql('SELECT COUNT(*) AS n FROM item_names', [], name)).toEqual([{ n: 3000 }]);
    const context = (schema: string) =>
      sql('SELECT table_name AS name, character_set_client AS client, collation_connection AS collation FROM information_schema.views WHERE table_schema = ? ORDER BY 1', [schema]);
    const original = await context(seeded);
    expect(original.find((view) => view.name === 'item_labels')).toMatchObject({ client: 'utf8mb3', collation: 'utf8mb3_general_ci' });
    expect(await context(name)).toEqual(original);
    // The trigger is live on the swapped-in table.
    await sql("INSERT INTO items (id, name) VALUES (999999, 'after the swap')", [], name);
    expect(await sql('SELECT at_name FROM audit WHERE item_id = 999999', [], name)).toEqual([{ at_name: 'after the swap' }]);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('a multi-database restore whose script fails near its end leaves both targets untouched', async () => {
    const second = await database('atomsec');
    await seed(second, 500);
    const handle = await source().dump({ databases: [seeded, second], signal: signal() });
    const bytes = await readAll(handle.stream);
    const first = await existingTarget('atomm1');
    const other = await existingTarget('atomm2');
    const mapping = { [seeded]: first.name, [second]: other.name };
    await expect(source().restore(failingAfterShare(bytes, 0.95), { target: { databaseMapping: mapping }, signal: signal() })).rejects.toThrow();
    expect(await snapshot(first.name)).toEqual(first.before);
    expect(await snapshot(other.name)).toEqual(other.before);
    expect([...(await workSchemas(first.name)), ...(await workSchemas(other.name))]).toEqual([]);
    // The same backup whole goes in, both databases at once.
    await source().restore(Readable.from([bytes]), { target: { databaseMapping: mapping }, signal: signal() });
    expect(await tableRows(first.name)).toEqual(await tableRows(seeded));
    expect(await tableRows(other.name)).toEqual(await tableRows(second));
  }, 180_000);

  it('a restore into a new database creates it only when the restore succeeded', async () => {
    const name = `${seeded}_new`;
    created.push(name);
    await expect(source().restore(failingAfterShare(dump, 0.6), { target: { database: name }, signal: signal() })).rejects.toThrow();
    expect(await sql('SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?', [name])).toEqual([]);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('listDatabases leaves out staging and set-aside schemas (a backup of all databases never takes one)', async () => {
    const leftover = `${seeded.slice(0, 20)}__holdfast_old_0123abcd`;
    created.push(leftover);
    await sql(`CREATE DATABASE \`${leftover}\``);
    const names = await source().listDatabases();
    expect(names).toContain(seeded);
    expect(names).not.toContain(leftover);
  });

  it('cuts work names to 64 characters', () => {
    expect([...workName('d'.repeat(70), '__holdfast_staging_', '0123abcd')]).toHaveLength(64);
  });
});
