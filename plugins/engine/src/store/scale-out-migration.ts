import { defineMigration } from '@holdfast/orm-port';

/**
 * What several server processes on one database need from the engine's tables:
 * - `executions.scheduled_for`: the cron slot a scheduled run was queued for, unique per job, so a slot is queued at
 *   most once even when two processes both believe they are the scheduler for a moment (a lock hand-over);
 * - `scheduler_state`: how far the scheduler has fired, so a process that takes the scheduler over queues the slots
 *   that fell due while nobody held it;
 * - `engine_processes`: every running engine with its role and heartbeat, so runs can be spread over the workers
 *   that are alive and operators can see which process holds which run (`executions.claimed_by`).
 */
export const createScaleOutTables = defineMigration('20261201-engine-200-scale-out', async (knex) => {
  await knex.schema.alterTable('executions', (t) => {
    t.datetime('scheduled_for', { useTz: true }).nullable();
    t.unique(['job_id', 'scheduled_for'], { indexName: 'executions_job_id_scheduled_for_unique' });
  });
  await knex.schema.createTable('scheduler_state', (t) => {
    t.string('name', 32).primary();
    t.bigInteger('fired_through').notNullable();
    t.string('holder', 64).nullable();
  });
  await knex.schema.createTable('engine_processes', (t) => {
    t.string('id', 64).primary();
    t.string('role', 16).notNullable();
    t.string('host', 255).notNullable();
    t.integer('pid').notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('heartbeat_at').notNullable();
    t.index(['heartbeat_at'], 'engine_processes_heartbeat_at_index');
  });
});
