import { defineMigration } from '@holdfast/orm-port';
import type { PluginMigration } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import { versionHistoryMigration } from './002-version-history.js';
import { jobTestRestoreMigration } from './003-job-test-restore.js';
import { jobCompressionOptionsMigration } from './004-job-compression-options.js';
import { jobArchiveOptionsMigration } from './005-job-archive-options.js';
import { publicKeyProfilesMigration } from './006-public-key-profiles.js';
import { sourceAgentMigration } from './007-source-agent.js';
import { destinationTransferMigration } from './008-destination-transfer.js';

type Table = Knex.CreateTableBuilder;

// Each table gets its own schema builder: one builder accumulates statements and would replay them.
// Timestamps carry a time zone on PostgreSQL; SQLite has one datetime type.
function timestamps(t: Table): void {
  t.datetime('created_at', { useTz: true }).notNullable();
  t.datetime('updated_at', { useTz: true }).notNullable();
}

function namedRecord(t: Table, table: string): void {
  t.string('id', 36).primary();
  t.string('name', 255).notNullable().unique({ indexName: `${table}_name_unique` });
  t.text('description').nullable();
}

async function createConfigTables(knex: Knex): Promise<void> {
  await knex.schema.createTable('adapter_configs', (t) => {
    t.string('id', 36).primary();
    t.string('name', 255).notNullable();
    t.string('type', 32).notNullable();
    t.string('adapter_id', 255).notNullable();
    t.text('config').notNullable();
    t.text('metadata').nullable();
    t.string('primary_credential_id', 36).nullable().index('adapter_configs_primary_credential_id_index');
    t.string('ssh_credential_id', 36).nullable().index('adapter_configs_ssh_credential_id_index');
    t.string('default_retention_policy_id', 36).nullable();
    t.boolean('exclude_from_restore').notNullable().defaultTo(false);
    t.datetime('last_health_check', { useTz: true }).nullable();
    t.string('last_status', 16).notNullable().defaultTo('ONLINE');
    t.text('last_error').nullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    timestamps(t);
    // Names are unique per type so export/import can match records by name.
    t.unique(['type', 'name'], { indexName: 'adapter_configs_type_name_unique' });
  });
  await knex.schema.createTable('credential_profiles', (t) => {
    namedRecord(t, 'credential_profiles');
    t.string('type', 32).notNullable();
    t.text('data').notNullable();
    timestamps(t);
  });
  await knex.schema.createTable('encryption_profiles', (t) => {
    namedRecord(t, 'encryption_profiles');
    t.text('secret_key').notNullable();
    timestamps(t);
  });
  await knex.schema.createTable('system_key_canary', (t) => {
    t.string('id', 64).primary();
    t.text('sealed').notNullable();
    t.datetime('created_at', { useTz: true }).notNullable();
  });
}

async function createTemplateTables(knex: Knex): Promise<void> {
  await knex.schema.createTable('retention_policies', (t) => {
    namedRecord(t, 'retention_policies');
    t.text('config').notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.boolean('is_system').notNullable().defaultTo(false);
    timestamps(t);
  });
  await knex.schema.createTable('naming_templates', (t) => {
    namedRecord(t, 'naming_templates');
    t.text('pattern').notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.boolean('is_system').notNullable().defaultTo(false);
    timestamps(t);
  });
  await knex.schema.createTable('schedule_presets', (t) => {
    namedRecord(t, 'schedule_presets');
    t.string('schedule', 255).notNullable();
    t.boolean('is_system').notNullable().defaultTo(false);
    timestamps(t);
  });
  await knex.schema.createTable('notification_templates', (t) => {
    namedRecord(t, 'notification_templates');
    t.boolean('is_default').notNullable().defaultTo(false);
    t.text('bindings').notNullable().defaultTo('[]');
    timestamps(t);
  });
}

async function createJobTables(knex: Knex): Promise<void> {
  await knex.schema.createTable('jobs', (t) => {
    namedRecord(t, 'jobs');
    t.string('schedule', 255).notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('databases').notNullable().defaultTo('[]');
    t.string('compression', 16).notNullable().defaultTo('NONE');
    t.string('pg_compression', 255).notNullable().defaultTo('');
    t.string('notification_events', 32).notNullable().defaultTo('ALWAYS');
    t.boolean('skip_verification').notNullable().defaultTo(false);
    t.string('source_id', 36).notNullable().index('jobs_source_id_index');
    t.string('encryption_profile_id', 36).nullable().index('jobs_encryption_profile_id_index');
    t.string('naming_template_id', 36).nullable();
    t.string('schedule_preset_id', 36).nullable();
    t.string('notification_template_id', 36).nullable();
    timestamps(t);
  });
  await knex.schema.createTable('job_destinations', (t) => {
    t.string('id', 36).primary();
    t.string('job_id', 36).notNullable().index('job_destinations_job_id_index');
    t.string('config_id', 36).notNullable().index('job_destinations_config_id_index');
    t.integer('priority').notNullable().defaultTo(0);
    t.text('retention').notNullable().defaultTo('{}');
    t.string('retention_policy_id', 36).nullable();
    t.unique(['job_id', 'config_id'], { indexName: 'job_destinations_job_config_unique' });
  });
  // `system_tasks` (the system task schedules) was created here until the schedules moved to observability's own
  // `system_task_schedules` (its migration 20261205-observability-003 copies an existing table's rows). A database
  // made before keeps the old table, unused, for a later catalog migration to drop; a fresh one never gets it.
}

/**
 * Creates the catalog tables, `system_settings` included (the catalog owns settings; every other plugin reads them
 * through `TOKENS.Settings`). Installations from before that move already have the table, created by an earlier
 * identity migration with the same columns, hence the check.
 */
export const catalogSchemaMigration = defineMigration('20260102-catalog-001-schema', async (knex) => {
  await createConfigTables(knex);
  await createTemplateTables(knex);
  await createJobTables(knex);
  if (!(await knex.schema.hasTable('system_settings'))) {
    await knex.schema.createTable('system_settings', (t) => {
      t.string('key', 255).primary();
      t.text('value').notNullable();
      t.text('description').nullable();
      t.datetime('updated_at', { useTz: true }).notNullable();
    });
  }
});

/** The catalog's migrations in the order they apply. */
export const catalogMigrations: readonly PluginMigration[] = [catalogSchemaMigration, versionHistoryMigration, jobTestRestoreMigration, jobCompressionOptionsMigration, jobArchiveOptionsMigration, publicKeyProfilesMigration, sourceAgentMigration, destinationTransferMigration];
