import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Knex } from '@mikro-orm/knex';
import { MIGRATIONS_TABLE, openDatabase, type HoldfastDatabase } from '../src/index.js';
import { createSite, failingPlugin, Note, notesPlugin, type DatabaseSite } from './fixtures.js';

describe.each(['sqlite', 'postgresql'] as const)('openDatabase on %s', (dialect) => {
  let site: DatabaseSite;
  const opened: HoldfastDatabase[] = [];

  async function open(plugins = [notesPlugin()]): Promise<HoldfastDatabase> {
    const db = await openDatabase({ dataDir: site.dataDir, databaseUrl: site.databaseUrl, plugins });
    opened.push(db);
    return db;
  }

  beforeEach(async () => {
    site = await createSite(dialect);
  });

  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    await site.remove();
  });

  it('reports its dialect', async () => {
    const db = await open();
    expect(db.dialect).toBe(dialect);
  });

  it('applies every plugin migration once, in name order', async () => {
    const db = await open();
    const expected = ['20261120-notes-001-table', '20261120-notes-002-index'];
    expect(await db.pendingMigrations()).toEqual(expected);
    expect(await db.migrate()).toEqual(expected);
    expect(await db.migrate()).toEqual([]);
    expect(await db.pendingMigrations()).toEqual([]);
    await db.close();

    // The record survives a reopen: a second process start applies nothing.
    const reopened = await open();
    expect(await reopened.migrate()).toEqual([]);
    const knex = (reopened.em().getKnex() as Knex);
    const rows = await knex(MIGRATIONS_TABLE).select('name').orderBy('name');
    expect(rows.map((row: { name: string }) => row.name)).toEqual(expected);
  });

  it('round-trips a plugin entity', async () => {
    const db = await open();
    await db.migrate();
    const createdAt = new Date('2026-11-20T10:00:00.000Z');
    const writer = db.em();
    writer.create(Note, { body: 'first note', createdAt });
    await writer.flush();

    const found = await db.em().find(Note, { body: 'first note' });
    expect(found).toHaveLength(1);
    expect(found[0]?.id).toBeGreaterThan(0);
    expect(found[0]?.createdAt.toISOString()).toBe(createdAt.toISOString());
  });

  it('rolls back a failing migration and leaves it pending', async () => {
    const db = await open([notesPlugin(), failingPlugin()]);
    await expect(db.migrate()).rejects.toThrow(/exploded on purpose/);
    const knex = db.em().getKnex() as Knex;
    expect(await knex.schema.hasTable('half_done')).toBe(false);
    expect(await db.pendingMigrations()).toContain('20261120-failing-001');
  });

  it('is reachable while open and unreachable after close', async () => {
    const db = await open();
    expect(await db.isReachable()).toBe(true);
    await db.close();
    expect(await db.isReachable()).toBe(false);
  });
});

describe('embedded database location', () => {
  let site: DatabaseSite;
  beforeEach(async () => {
    site = await createSite('sqlite');
  });
  afterEach(() => site.remove());

  it('creates a missing data directory and holdfast.db inside it', async () => {
    const dataDir = join(site.dataDir, 'nested', 'data');
    const db = await openDatabase({ dataDir, plugins: [notesPlugin()] });
    try {
      await db.migrate();
      await expect(access(join(dataDir, 'holdfast.db'))).resolves.toBeUndefined();
      expect(db.location).toBe(join(dataDir, 'holdfast.db'));
    } finally {
      await db.close();
    }
  });
});
