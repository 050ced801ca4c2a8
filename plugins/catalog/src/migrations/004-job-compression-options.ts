import { defineMigration } from '@holdfast/orm-port';

/** Issue 21: a job's compression level and ZSTD worker threads (null: the codec's default). */
export const jobCompressionOptionsMigration = defineMigration('20261124-catalog-004-job-compression-options', async (knex) => {
  await knex.schema.alterTable('jobs', (t) => {
    t.integer('compression_level').nullable();
    t.integer('compression_threads').nullable();
  });
});
