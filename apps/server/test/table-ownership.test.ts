// One owner per table (issue "the house"): every table is created or altered by the migrations of exactly one
// feature plugin. The migrations run in the order the server runs them on a fresh embedded database while the DDL
// each one issues is recorded, so a plugin that creates, alters or indexes another plugin's table fails here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { orderPlugins, type HoldfastPlugin, type PluginMigration } from '@holdfast/kernel';
import { collectMigrations, openDatabase } from '@holdfast/database';
import { createPersistencePlugin } from '@holdfast/persistence';
import type { Knex } from '@mikro-orm/knex';
import { afterEach, describe, expect, it } from 'vitest';
import { featurePlugins } from '../src/index.js';

const DDL = [
  /^\s*create\s+table\s+(?:if\s+not\s+exists\s+)?[`"]?([\w.]+)[`"]?/i,
  /^\s*alter\s+table\s+(?:only\s+)?[`"]?([\w.]+)[`"]?/i,
  /^\s*drop\s+table\s+(?:if\s+exists\s+)?[`"]?([\w.]+)[`"]?/i,
  /^\s*create\s+(?:unique\s+)?index\s+(?:if\s+not\s+exists\s+)?[`"]?[\w.]+[`"]?\s+on\s+[`"]?([\w.]+)[`"]?/i,
];

/** The table a DDL statement touches, or undefined for queries and knex's own temporary tables. */
function tableOf(sql: string): string | undefined {
  for (const pattern of DDL) {
    const table = pattern.exec(sql)?.[1];
    if (table) return table.startsWith('_knex_temp') ? undefined : table;
  }
  return undefined;
}

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Runs every plugin's migrations on a fresh embedded database and answers which plugins touched each table. */
async function tableOwners(plugins: readonly HoldfastPlugin[]): Promise<Map<string, Set<string>>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-owners-'));
  dirs.push(dataDir);
  const database = await openDatabase({ dataDir, plugins });
  const owners = new Map<string, Set<string>>();
  let current = '';
  const knex = database.em().getKnex();
  knex.on('query', (query: { sql: string }) => {
    const table = tableOf(query.sql);
    if (table) owners.set(table, (owners.get(table) ?? new Set()).add(current));
  });
  try {
    for (const { plugin, migration } of collectMigrations(plugins)) {
      current = plugin;
      await knex.transaction((trx) => migration.up(trx, database.dialect));
    }
  } finally {
    await database.close();
  }
  return owners;
}

const shared = (owners: Map<string, Set<string>>) =>
  [...owners].filter(([, plugins]) => plugins.size > 1).map(([table, plugins]) => `${table}: ${[...plugins].join(', ')}`);

describe('table ownership', () => {
  it('every table of the assembled server is created and altered by one plugin only', async () => {
    // The boot's core services stand in as pre-registered; what a plugin provides must not (orderPlugins refuses both).
    const features = featurePlugins({});
    const provided = new Set(features.flatMap((plugin) => plugin.provides ?? []));
    const plugins = orderPlugins(features, (token) => !provided.has(token));
    const owners = await tableOwners(plugins);
    expect(owners.size).toBeGreaterThan(20);
    expect(owners.get('system_settings')).toEqual(new Set(['catalog']));
    expect(shared(owners)).toEqual([]);
  });

  it('names the table and both plugins when a second plugin alters a table it does not own', async () => {
    const migration = (name: string, up: (knex: Knex) => Promise<void>): PluginMigration => ({
      name,
      up: (builder) => up(builder as Knex),
    });
    const owner: HoldfastPlugin = {
      name: 'owner',
      migrations: [migration('1-owner', (knex) => knex.schema.createTable('notes', (t) => t.string('id').primary()))],
    };
    const intruder: HoldfastPlugin = {
      name: 'intruder',
      migrations: [migration('2-intruder', (knex) => knex.schema.alterTable('notes', (t) => t.text('extra').nullable()))],
    };
    // The persistence plugin only brings an entity: the ORM refuses to open without one.
    expect(shared(await tableOwners([createPersistencePlugin(), owner, intruder]))).toEqual(['notes: owner, intruder']);
  });
});
