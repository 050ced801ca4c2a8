import { defineMigration } from '@holdfast/orm-port';

/**
 * Point-in-time recovery (docs/pitr.md), the engine's three tables. Instants are epoch milliseconds in bigint
 * columns, read the same on libsql and PostgreSQL.
 * - `change_log_segments`: every archived piece of a job's change log (a completed segment, or the newest partial of
 *   a segment still being written) and the destinations that hold it; the recoverable window is computed from it.
 * - `change_log_bases`: every base backup of a job with where it starts in the log, and the destinations still
 *   holding it (retention removes them), so the window needs no storage listing.
 * - `change_log_streams`: which process streams which job, since when, and how it is going (the API shows it even
 *   when it is answered by another process).
 */
export const createChangeLogTables = defineMigration('20261206-engine-300-change-log', async (knex) => {
  await knex.schema.createTable('change_log_segments', (t) => {
    t.increments('id').primary();
    t.string('job_id', 64).notNullable();
    t.string('name', 128).notNullable();
    t.integer('timeline').notNullable();
    t.boolean('partial').notNullable();
    t.text('storage_key').notNullable();
    t.bigInteger('plain_size').notNullable();
    t.bigInteger('stored_size').notNullable();
    t.string('sha256', 64).notNullable();
    t.bigInteger('covers_until').notNullable();
    t.bigInteger('archived_at').notNullable();
    /** JSON array of the destination (adapter config) ids holding the piece. */
    t.text('destinations').notNullable();
    t.index(['job_id', 'timeline', 'name'], 'change_log_segments_job_timeline_name_index');
  });
  await knex.schema.createTable('change_log_bases', (t) => {
    t.string('execution_id', 36).primary();
    t.string('job_id', 64).notNullable();
    t.text('storage_key').notNullable();
    t.string('log_kind', 32).notNullable();
    t.string('start_position', 64).notNullable();
    t.string('stop_position', 64).notNullable();
    t.string('start_segment', 128).notNullable();
    t.integer('timeline').notNullable();
    t.string('system_id', 64).notNullable();
    t.string('server_version', 64).notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('consistent_at').notNullable();
    /** JSON array of the destination ids still holding the base backup; empty: it is gone. */
    t.text('destinations').notNullable();
    t.index(['job_id', 'consistent_at'], 'change_log_bases_job_consistent_at_index');
  });
  await knex.schema.createTable('change_log_streams', (t) => {
    t.string('job_id', 64).primary();
    t.string('process_id', 64).notNullable();
    t.string('host', 255).notNullable();
    t.integer('pid').notNullable();
    t.bigInteger('since').notNullable();
    t.string('state', 16).notNullable();
    t.text('last_error').nullable();
    t.bigInteger('updated_at').notNullable();
  });
});
