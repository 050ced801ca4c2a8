import { defineMigration } from '@holdfast/orm-port';

/** Issue 19: a job's scratch target for test restores (JSON, null: none). */
export const jobTestRestoreMigration = defineMigration('20261124-catalog-003-job-test-restore', async (knex) => {
  await knex.schema.alterTable('jobs', (t) => {
    t.text('test_restore').nullable();
  });
});
