import { defineMigration } from '@holdfast/orm-port';

/** Issue 20: a job's backup format (plain or seekable archive) and when its incremental chains start a new full. */
export const jobArchiveOptionsMigration = defineMigration('20261125-catalog-005-job-archive-options', async (knex) => {
  await knex.schema.alterTable('jobs', (t) => {
    t.string('archive_format').notNullable().defaultTo('PLAIN');
    t.integer('full_every_runs').nullable();
    t.integer('full_every_days').nullable();
  });
});
