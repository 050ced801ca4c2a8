// Issue 47: the engine refuses (409) a restore over an existing database unless the request says `overwrite: true`,
// but a database created after that check was replaced silently. `RestoreOptions.overwrite: false` now makes the
// restore itself refuse a target that exists when it is staged, or that appeared by the time of the swap.
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, type SourceAdapter } from '@holdfast/sdk';
import { readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { checksums, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';

const created: string[] = [];
async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}
const source = (): SourceAdapter => instantiateAdapter(container, definition, server);
const signal = () => new AbortController().signal;
const unique = (label: string) => `hf_pgsrc_${label}_${Math.random().toString(16).slice(2, 10)}`;

/** Databases a restore works in, left over for `target`. */
async function workDatabases(target: string): Promise<string[]> {
  const rows = await sql<{ datname: string }>('postgres', `SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${target.slice(0, 20)}%__holdfast_%`]);
  return rows.map((row) => row.datname);
}

/** An existing database with other content than the backup. */
async function existingTarget(label: string): Promise<{ name: string; before: Record<string, string> }> {
  const name = await database(label);
  await sql(name, `CREATE TABLE keep_me (v text); INSERT INTO keep_me VALUES ('only in the old database'), ('second row')`);
  return { name, before: await checksums(name) };
}

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
});

describe('RestoreOptions.overwrite against the local PostgreSQL', () => {
  let expected: Record<string, string>;
  let dump: Buffer;

  beforeAll(async () => {
    const seeded = await database('owsrc');
    expected = await seed(seeded, 5000);
    const handle = await source().dump({ databases: [seeded], signal: signal(), engineOptions: { pgCompression: '0' } });
    dump = await readAll(handle.stream);
    await handle.done;
  });

  it('overwrite: false refuses an existing database, naming it and saying to send "overwrite": true; it keeps its rows, no staging is left', async () => {
    const { name, before } = await existingTarget('owno');
    const restoring = source().restore(Readable.from([dump]), { target: { database: name }, signal: signal(), overwrite: false });
    await expect(restoring).rejects.toThrow(`the database "${name}" exists now and the restore request did not allow replacing it`);
    await expect(restoring).rejects.toThrow('Send "overwrite": true');
    expect(await checksums(name)).toEqual(before);
    expect(await workDatabases(name)).toEqual([]);
  });

  it('a database created while the restore runs (after any check before it) is not replaced: refused at the swap, staging dropped', async () => {
    const name = unique('owrace');
    created.push(name);
    const input = new PassThrough();
    input.write(dump.subarray(0, dump.length - 1));
    const restoring = source().restore(input, { target: { database: name }, signal: signal(), overwrite: false });
    restoring.catch(() => undefined);
    // The staging database exists once pg_restore started; the target is created now, then the input ends.
    for (let tries = 0; (await workDatabases(name)).length === 0; tries++) {
      if (tries > 100) throw new Error('the restore never created its staging database');
      await sleep(50);
    }
    await sql('postgres', `CREATE DATABASE "${name}"`);
    await sql(name, `CREATE TABLE keep_me (v text); INSERT INTO keep_me VALUES ('made meanwhile')`);
    const before = await checksums(name);
    input.end(dump.subarray(dump.length - 1));
    await expect(restoring).rejects.toThrow(`the database "${name}" exists now and the restore request did not allow replacing it`);
    expect(await checksums(name)).toEqual(before);
    expect(await workDatabases(name)).toEqual([]);
  });

  it('overwrite: true replaces the existing database with the backup', async () => {
    const { name } = await existingTarget('owyes');
    await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal(), overwrite: true });
    expect(await checksums(name)).toEqual(expected);
    expect(await workDatabases(name)).toEqual([]);
  });

  it('overwrite: false restores into a database that does not exist', async () => {
    const name = unique('ownew');
    created.push(name);
    await source().restore(Readable.from([dump]), { target: { database: name }, signal: signal(), overwrite: false });
    expect(await checksums(name)).toEqual(expected);
  });
});
