// Issue 47: the engine refuses (409) a restore over an existing database unless the request says `overwrite: true`,
// but a database created after that check was replaced silently. `RestoreOptions.overwrite: false` now makes the
// restore itself refuse a target that exists when it is staged, or that appeared by the time of the swap.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { createDatabase, dropDatabases, seed, server, sql, tableRows, uniqueName } from './helpers.js';

const created: string[] = [];
async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}
const source = (): SourceAdapter => instantiateAdapter(container, definition, { ...server });
const signal = () => new AbortController().signal;

/** Schemas a restore works in, left over for `target`. */
async function workSchemas(target: string): Promise<string[]> {
  const rows = await sql<{ name: string }>('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name LIKE ?', [`${target.slice(0, 20)}%\\_\\_holdfast\\_%`]);
  return rows.map((row) => row.name);
}

/** An existing database with other content than the backup. */
async function existingTarget(label: string): Promise<{ name: string; before: unknown }> {
  const name = await database(label);
  await sql('CREATE TABLE keep_me (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB', [], name);
  await sql("INSERT INTO keep_me VALUES (1, 'only in the old database'), (2, 'second row')", [], name);
  return { name, before: await tableRows(name) };
}

afterAll(async () => {
  await dropDatabases(...created);
});

describe('RestoreOptions.overwrite against the local MariaDB', () => {
  let dump: Buffer;
  let expected: unknown;

  beforeAll(async () => {
    // The client's option files go to a directory of this file's own (mysql-source.test.ts counts the shared ones).
    process.env.TMPDIR = mkdtempSync(path.join(tmpdir(), 'hf-overwrite-mysql-'));
    const seeded = await database('owsrc');
    await seed(seeded, 2000);
    expected = await tableRows(seeded);
    const handle = await source().dump({ databases: [seeded], signal: signal() });
    dump = await readAll(handle.stream);
    await handle.done;
  });

  it('overwrite: false refuses an existing database, naming it and saying to send "overwrite": true; it keeps its rows, no staging is left', async () => {
    const { name, before } = await existingTarget('owno');
    const restoring = source().restore(Readable.from([dump]), { target: { database: name }, signal: signal(), overwrite: false });
    await expect(restoring).rejects.toThrow(`the database "${name}" exists now and the restore request did not allow replacing it`);
    await expect(restoring).rejects.toThrow('Send "overwrite": true');
    expect(await tableRows(name)).toEqual(before);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('a database created while the restore runs (after any check before it) is not replaced: refused at the swap, staging dropped', async () => {
    const name = uniqueName('owrace');
    created.push(name);
    const input = new PassThrough();
    input.write(dump.subarray(0, dump.length - 1));
    const restoring = source().restore(input, { target: { database: name }, signal: signal(), overwrite: false });
    restoring.catch(() => undefined);
    for (let tries = 0; (await workSchemas(name)).length === 0; tries++) {
      if (tries > 100) throw new Error('the restore never created its staging schema');
      await sleep(50);
    }
    await sql(`CREATE DATABASE \`${name}\``);
    await sql('CREATE TABLE keep_me (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB', [], name);
    await sql("INSERT INTO keep_me VALUES (1, 'made meanwhile')", [], name);
    const before = await tableRows(name);
    input.end(dump.subarray(dump.length - 1));
    await expect(restoring).rejects.toThrow(`the database "${name}" exists now and the restore request did not allow replacing it`);
    expect(await tableRows(name)).toEqual(before);
    expect(await workSchemas(name)).toEqual([]);
  });

  it('overwrite: true replaces the existing database with the backup', async () => {
    const { name } = await existingTarget('owyes');
    await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal(), overwrite: true });
    expect(await tableRows(name)).toEqual(expected);
    expect(await workSchemas(name)).toEqual([]);
  });
});
