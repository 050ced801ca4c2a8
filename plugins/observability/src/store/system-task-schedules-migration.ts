import { defineMigration } from '@holdfast/orm-port';

/** The table of {@link createSystemTaskSchedulesTable}; the runner and the task routes read and write it. */
export const SYSTEM_TASK_SCHEDULES_TABLE = 'system_task_schedules';

/**
 * `system_task_schedules`: the schedule, enabled flag, last and next run of each system task of SPEC (the runner's
 * own tasks, CONFIG_BACKUP and INTEGRITY_CHECK, keep theirs in the observability settings). Until this migration the
 * catalog kept them in its `system_tasks` table; a database made before it keeps them: every row is copied over
 * once, here. This one-time handover is the only place observability reads that table; the catalog no longer maps
 * it (it stays, unused, for a later catalog migration to drop). A composition without the catalog has nothing to
 * copy, and observability seeds the default schedules at start.
 */
export const createSystemTaskSchedulesTable = defineMigration('20261205-observability-003-system-task-schedules', async (knex) => {
  await knex.schema.createTable(SYSTEM_TASK_SCHEDULES_TABLE, (t) => {
    t.string('task', 64).primary();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.string('schedule', 255).notNullable();
    t.datetime('last_run_at', { useTz: true }).nullable();
    t.datetime('next_run_at', { useTz: true }).nullable();
    t.datetime('updated_at', { useTz: true }).notNullable();
  });
  const legacy = 'system_tasks';
  if (!(await knex.schema.hasTable(legacy))) return;
  await knex.raw(
    `insert into ${SYSTEM_TASK_SCHEDULES_TABLE} (task, enabled, schedule, last_run_at, next_run_at, updated_at)
     select task, enabled, schedule, last_run_at, next_run_at, updated_at from ${legacy}`,
  );
});
