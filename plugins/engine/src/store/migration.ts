import { defineMigration } from '@holdfast/orm-port';
import type { Knex } from '@mikro-orm/knex';

/**
 * Creates `executions` and `execution_logs`. Every history query has an index: status, type, trigger type and job
 * each paired with `started_at` (the sort of the history list), `started_at` alone, the FIFO key for the queue
 * (`status, queue_order`), and `execution_id, seq` for the log of one execution.
 */
export const createEngineTables = defineMigration('20261121-engine-001-executions', async (knex) => {
  const timestamp = (t: Knex.CreateTableBuilder, name: string) => t.datetime(name, { useTz: true });
  await knex.schema.createTable('executions', (t) => {
    t.string('id', 36).primary();
    t.string('job_id', 36).nullable();
    t.string('type', 32).notNullable();
    t.string('status', 16).notNullable();
    timestamp(t, 'started_at').notNullable();
    timestamp(t, 'ended_at').nullable();
    t.bigInteger('size').nullable();
    t.text('path').nullable();
    t.text('metadata').nullable();
    t.string('trigger_type', 16).nullable();
    t.string('trigger_label', 255).nullable();
    timestamp(t, 'created_at').notNullable();
    t.bigInteger('queue_order').notNullable();
    t.string('claimed_by', 64).nullable();
    timestamp(t, 'heartbeat_at').nullable();
    timestamp(t, 'last_progress_at').nullable();
    t.boolean('lock_backup').notNullable().defaultTo(false);
    t.boolean('cancel_requested').notNullable().defaultTo(false);
    t.text('request').nullable();
    t.text('error').nullable();
    t.index(['status', 'queue_order'], 'executions_status_queue_order_index');
    t.index(['started_at'], 'executions_started_at_index');
    t.index(['status', 'started_at'], 'executions_status_started_at_index');
    t.index(['type', 'started_at'], 'executions_type_started_at_index');
    t.index(['trigger_type', 'started_at'], 'executions_trigger_type_started_at_index');
    t.index(['job_id', 'started_at'], 'executions_job_id_started_at_index');
  });
  await knex.schema.createTable('execution_logs', (t) => {
    t.increments('id').primary();
    t.string('execution_id', 36).notNullable();
    t.integer('seq').notNullable();
    timestamp(t, 'time').notNullable();
    t.string('level', 8).notNullable();
    t.string('stage', 32).notNullable();
    t.text('message').notNullable();
    t.index(['execution_id', 'seq'], 'execution_logs_execution_id_seq_index');
  });
});
