import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HoldfastPlugin } from '@holdfast/kernel';
import { defineMigration } from '@holdfast/orm-port';
import { defineEntity } from '@mikro-orm/core';
import { createThrowawayPostgres } from '@holdfast/tooling/harness/test-site';

/** An entity a test plugin contributes, to prove plugin entities reach the ORM. */
export const Note = defineEntity({
  name: 'TestNote',
  tableName: 'test_note',
  properties: (p) => ({
    id: p.integer().primary().autoincrement(),
    body: p.text(),
    createdAt: p.datetime(),
  }),
});

const createNoteTable = defineMigration('20261120-notes-001-table', async (knex) => {
  await knex.schema.createTable('test_note', (table) => {
    table.increments('id');
    table.text('body').notNullable();
    table.datetime('created_at').notNullable();
  });
});

// Contributed after the table migration on purpose: the runner must order by name, not by contribution order.
const addNoteIndex = defineMigration('20261120-notes-002-index', async (knex) => {
  await knex.schema.alterTable('test_note', (table) => table.index(['created_at'], 'test_note_created_at_idx'));
});

/** A plugin with one entity and two migrations, listed out of name order. */
export function notesPlugin(): HoldfastPlugin {
  return { name: 'notes', entities: [Note], migrations: [addNoteIndex, createNoteTable] };
}

/** A migration that creates a table and then fails, to prove each migration runs in a transaction. */
export function failingPlugin(): HoldfastPlugin {
  return {
    name: 'failing',
    migrations: [
      defineMigration('20261120-failing-001', async (knex) => {
        await knex.schema.createTable('half_done', (table) => table.increments('id'));
        throw new Error('migration exploded on purpose');
      }),
    ],
  };
}

/** A place for one test's database: a temp data dir, plus a throwaway PostgreSQL database for that dialect. */
export interface DatabaseSite {
  dataDir: string;
  databaseUrl?: string;
  remove(): Promise<void>;
}

export async function createSite(dialect: 'sqlite' | 'postgresql'): Promise<DatabaseSite> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-database-'));
  const postgres = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  return {
    dataDir,
    databaseUrl: postgres?.url,
    async remove() {
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
