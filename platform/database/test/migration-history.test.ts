import { mkdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HoldfastPlugin } from '@holdfast/kernel';
import { MikroORM, type Options } from '@mikro-orm/core';
import type { Knex } from '@mikro-orm/knex';
import { LibSqlDriver } from '@mikro-orm/libsql';
import { Migration, Migrator } from '@mikro-orm/migrations';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { collectMigrations, MIGRATIONS_TABLE, openDatabase, type HoldfastDatabase } from '../src/index.js';
import { resolveConnectionTarget } from '../src/connection.js';
import { createSite, notesPlugin, type DatabaseSite } from './fixtures.js';

/**
 * Databases migrated before the persistence plugin (now this package) had its own runner were migrated by MikroORM's migrator (the
 * `@mikro-orm/migrations` package, now a test dependency only). This migrates one the old way, with the options the
 * plugin used then, and opens it with the current code.
 */
async function migrateTheOldWay(site: DatabaseSite, plugins: HoldfastPlugin[]): Promise<string[]> {
  const target = resolveConnectionTarget(site.dataDir, site.databaseUrl);
  if (target.dialect === 'sqlite') await mkdir(site.dataDir, { recursive: true });
  const migrationsList = collectMigrations(plugins).map(({ migration }) => {
    class PluginMigrationRunner extends Migration {
      override async up(): Promise<void> {
        await migration.up(this.ctx ?? this.getKnex(), target.dialect);
      }
    }
    return { name: migration.name, class: PluginMigrationRunner };
  });
  const driver: Pick<Options, 'driver' | 'dbName' | 'clientUrl'> =
    target.dialect === 'sqlite' ? { driver: LibSqlDriver, dbName: target.file } : { driver: PostgreSqlDriver, clientUrl: target.url };
  const orm = await MikroORM.init({
    ...driver,
    entities: plugins.flatMap((plugin) => [...(plugin.entities ?? [])]) as Options['entities'],
    extensions: [Migrator],
    ensureDatabase: false,
    allowGlobalContext: false,
    discovery: { warnWhenNoEntities: false },
    migrations: { tableName: MIGRATIONS_TABLE, migrationsList, transactional: true, allOrNothing: false, disableForeignKeys: false, snapshot: false, silent: true },
  });
  try {
    return (await orm.getMigrator().up()).map((migration) => migration.name);
  } finally {
    await orm.close(true);
  }
}

/** A migration added in a later version, after the database was migrated the old way. */
function laterPlugin(): HoldfastPlugin {
  return {
    name: 'later',
    migrations: [
      {
        name: '20261202-later-001-column',
        async up(builder) {
          await (builder as Knex).schema.alterTable('test_note', (table) => table.text('title'));
        },
      },
    ],
  };
}

/** Runs SQL statements on a PostgreSQL database through a bare MikroORM connection. */
async function onPostgres(url: string, statements: string[]): Promise<void> {
  const orm = await MikroORM.init({ driver: PostgreSqlDriver, clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, ensureDatabase: false, allowGlobalContext: false });
  try {
    for (const sql of statements) await orm.em.getConnection().execute(sql);
  } finally {
    await orm.close(true);
  }
}

/** A fresh site for each test of the surrounding describe, and the database the test opened there, closed after it. */
function testSite(dialect: 'sqlite' | 'postgresql'): { site: DatabaseSite; db?: HoldfastDatabase } {
  const state = {} as { site: DatabaseSite; db?: HoldfastDatabase };
  beforeEach(async () => {
    state.site = await createSite(dialect);
  });
  afterEach(async () => {
    await state.db?.close();
    state.db = undefined;
    await state.site.remove();
  });
  return state;
}

describe.each(['sqlite', 'postgresql'] as const)('migration history written by MikroORM migrator, on %s', (dialect) => {
  const current = testSite(dialect);

  it('is recognised: nothing is applied twice, and a newer migration is applied and recorded', async () => {
    const before = [notesPlugin()];
    const appliedBefore = await migrateTheOldWay(current.site, before);
    expect(appliedBefore).toEqual(['20261120-notes-001-table', '20261120-notes-002-index']);

    current.db = await openDatabase({ dataDir: current.site.dataDir, databaseUrl: current.site.databaseUrl, plugins: [...before, laterPlugin()] });
    expect(await current.db.pendingMigrations()).toEqual(['20261202-later-001-column']);
    expect(await current.db.migrate()).toEqual(['20261202-later-001-column']);
    expect(await current.db.migrate()).toEqual([]);

    const knex = current.db.em().getKnex() as Knex;
    expect(await knex.schema.hasColumn('test_note', 'title')).toBe(true);
    const rows: Array<{ id: number; name: string; executed_at: unknown }> = await knex(MIGRATIONS_TABLE).select('*').orderBy('id');
    expect(rows.map((row) => row.name)).toEqual([...appliedBefore, '20261202-later-001-column']);
    // The new record fills the old table's columns the same way: a fresh id and a time.
    expect(rows.at(-1)!.id).toBeGreaterThan(rows.at(-2)!.id);
    expect(rows.at(-1)!.executed_at).toBeTruthy();
  });
});

describe('migration history written by MikroORM migrator, on PostgreSQL with another schema first in the search path', () => {
  const current = testSite('postgresql');

  it('is found in the public schema, where that migrator kept it', async () => {
    // MikroORM's migrator named its default schema, public, in every statement; the plugins' own tables follow the
    // search path. A runner that followed the search path too would not find the record and migrate again.
    const url = new URL(current.site.databaseUrl!);
    await onPostgres(url.toString(), ['CREATE SCHEMA holdfast_app', `ALTER DATABASE "${url.pathname.slice(1)}" SET search_path = holdfast_app, public`]);
    const before = [notesPlugin()];
    await migrateTheOldWay(current.site, before);

    current.db = await openDatabase({ dataDir: current.site.dataDir, databaseUrl: current.site.databaseUrl, plugins: before });
    expect(await current.db.pendingMigrations()).toEqual([]);
    expect(await current.db.migrate()).toEqual([]);
    const knex = current.db.em().getKnex() as Knex;
    const where = await knex.raw("SELECT table_schema FROM information_schema.tables WHERE table_name IN ('test_note', ?) ORDER BY table_name", [MIGRATIONS_TABLE]);
    expect(where.rows.map((row: { table_schema: string }) => row.table_schema)).toEqual(['public', 'holdfast_app']);
  });
});
