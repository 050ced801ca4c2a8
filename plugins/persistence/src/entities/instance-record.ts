import { defineMigration } from '@holdfast/orm-port';
import { defineEntity } from '@mikro-orm/core';

/**
 * One row naming this Holdfast installation: a stable id (for logs, support and multi-process setups) and when
 * the database was first initialised. Persistence owns it so the entity contribution path is always exercised.
 */
export const InstanceRecord = defineEntity({
  name: 'InstanceRecord',
  tableName: 'holdfast_instance',
  properties: (p) => ({
    id: p.string().primary().length(36),
    createdAt: p.datetime(),
  }),
});

/** Creates the `holdfast_instance` table. */
export const createInstanceTable = defineMigration('20261120-persistence-001-instance', async (knex) => {
  await knex.schema.createTable('holdfast_instance', (table) => {
    table.string('id', 36).primary();
    table.datetime('created_at').notNullable();
  });
});
