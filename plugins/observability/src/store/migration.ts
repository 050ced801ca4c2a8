import type { PluginMigration } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';

/**
 * The observability tables. `task_leases` holds times as epoch milliseconds (bigint) rather than datetimes so the
 * one atomic `UPDATE ... WHERE expires_at < now` that takes a lease compares numbers on libsql and PostgreSQL alike.
 */
export const createObservabilityTables: PluginMigration = {
  name: '20261124-observability-001-tables',
  async up(builder) {
    const knex = builder as Knex;
    await knex.schema.createTable('system_task_runs', (t) => {
      t.string('id', 36).primary();
      t.string('task', 64).notNullable();
      t.string('trigger', 16).notNullable();
      t.string('status', 16).notNullable();
      t.text('message').nullable();
      t.datetime('started_at', { useTz: true }).notNullable();
      t.datetime('ended_at', { useTz: true }).nullable();
      t.index(['task', 'started_at'], 'system_task_runs_task_started_idx');
      t.index(['started_at'], 'system_task_runs_started_idx');
    });
    await knex.schema.createTable('task_leases', (t) => {
      t.string('task', 64).primary();
      t.string('holder', 64).nullable();
      t.bigInteger('expires_at').notNullable().defaultTo(0);
      // The cron slot (epoch ms) last claimed, so two processes whose timers fire a moment apart run a slot once.
      t.bigInteger('last_slot').notNullable().defaultTo(0);
    });
    await knex.schema.createTable('health_check_logs', (t) => {
      t.string('id', 36).primary();
      t.string('adapter_config_id', 36).notNullable();
      t.string('status', 16).notNullable();
      t.integer('latency_ms').notNullable();
      t.text('error').nullable();
      t.datetime('created_at', { useTz: true }).notNullable();
      t.index(['adapter_config_id', 'created_at'], 'health_check_logs_config_created_idx');
      t.index(['created_at'], 'health_check_logs_created_idx');
    });
    await knex.schema.createTable('observability_settings', (t) => {
      t.string('key', 64).primary();
      t.text('value').notNullable();
      t.datetime('updated_at', { useTz: true }).notNullable();
    });
    await knex.schema.createTable('storage_alert_states', (t) => {
      t.string('key', 128).primary();
      t.datetime('raised_at', { useTz: true }).notNullable();
    });
  },
};
