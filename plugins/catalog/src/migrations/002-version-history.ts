import { defineMigration } from '@holdfast/orm-port';

/** SPEC "DbVersionHistory": detected engine versions per source, paged newest first by (config, time). */
export const versionHistoryMigration = defineMigration('20261124-catalog-002-db-version-history', async (knex) => {
  await knex.schema.createTable('db_version_history', (t) => {
    t.string('id', 36).primary();
    t.string('adapter_config_id', 36).notNullable();
    t.string('previous_version', 255).nullable();
    t.string('new_version', 255).notNullable();
    t.string('edition', 255).nullable();
    t.datetime('detected_at', { useTz: true }).notNullable();
    t.index(['adapter_config_id', 'detected_at'], 'db_version_history_config_detected_index');
  });
});
