import type { PluginMigration } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';

/** Issue 21: a job's compression level and ZSTD worker threads (null: the codec's default). */
export const jobCompressionOptionsMigration: PluginMigration = {
  name: '20261124-catalog-004-job-compression-options',
  async up(builder) {
    const knex = builder as Knex;
    await knex.schema.alterTable('jobs', (t) => {
      t.integer('compression_level').nullable();
      t.integer('compression_threads').nullable();
    });
  },
};
