import { defineMigration } from '@holdfast/orm-port';

/**
 * The observability tables. `task_leases` holds times as epoch milliseconds (bigint) rather than datetimes so the
 * one atomic `UPDATE ... WHERE expires_at < now` that takes a lease compares numbers on libsql and PostgreSQL alike.
 */
export const createObservabilityTables = defineMigration('20261124-observability-001-tables', async (knex) => {
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
});

/**
 * `adapter_health`: the current health of each adapter configuration, one row per configuration id (the history
 * stays in `health_check_logs`). Until this migration the state lived in four columns of the catalog's
 * `adapter_configs` (`last_health_check`, `last_status`, `last_error`, `consecutive_failures`); a database made
 * before it keeps its state: the values are copied over once, here. This one-time handover is the only place
 * observability reads those columns; the catalog's code no longer maps them (they stay in its table, unused, for a
 * later catalog migration to drop). A composition without the catalog has nothing to copy.
 */
export const createAdapterHealthTable = defineMigration('20261205-observability-002-adapter-health', async (knex) => {
  await knex.schema.createTable('adapter_health', (t) => {
    t.string('adapter_config_id', 36).primary();
    t.datetime('last_health_check', { useTz: true }).nullable();
    t.string('last_status', 16).notNullable().defaultTo('ONLINE');
    t.text('last_error').nullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
  });
  const legacy = 'adapter_configs';
  if (!(await knex.schema.hasTable(legacy)) || !(await knex.schema.hasColumn(legacy, 'last_status'))) return;
  // Only configurations that were ever checked or tested: an untouched one reads as unchecked without a row.
  await knex.raw(
    `insert into adapter_health (adapter_config_id, last_health_check, last_status, last_error, consecutive_failures)
     select id, last_health_check, last_status, last_error, consecutive_failures from ${legacy}
     where last_health_check is not null or last_status <> 'ONLINE' or last_error is not null or consecutive_failures <> 0`,
  );
});
