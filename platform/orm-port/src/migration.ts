import type { PluginMigration } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import type { Dialect } from './index.js';

/**
 * A plugin migration with a typed schema builder. The kernel's {@link PluginMigration} hands `up` an `unknown`
 * builder (the kernel knows no ORM); the persistence plugin's runner passes the transaction's knex, so this is the
 * one place that says so, and no migration casts it.
 *
 * ```ts
 * export const addColumn = defineMigration('20261201-catalog-006-notes', async (knex) => {
 *   await knex.schema.alterTable('jobs', (t) => t.text('notes').nullable());
 * });
 * ```
 */
export function defineMigration(name: string, up: (knex: Knex, dialect: Dialect) => Promise<void>): PluginMigration {
  return { name, up: (builder, dialect) => up(builder as Knex, dialect) };
}
