import type { PluginMigration } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';

/** Issue 19: a job's scratch target for test restores (JSON, null: none). */
export const jobTestRestoreMigration: PluginMigration = {
  name: '20261124-catalog-003-job-test-restore',
  async up(builder) {
    const knex = builder as Knex;
    await knex.schema.alterTable('jobs', (t) => {
      t.text('test_restore').nullable();
    });
  },
};
