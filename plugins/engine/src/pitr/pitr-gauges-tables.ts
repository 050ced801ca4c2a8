import { defineMigration } from '@holdfast/orm-port';

/**
 * Point-in-time gauges and slot clean-up (docs/pitr.md, "Watching the archive"): `change_log_streams` keeps the slot
 * lag the stream last reported (the process serving `/metrics` may not be the one streaming, so it lives in the
 * table, not in memory) and the source the job streamed from (a deleted job's slot is dropped through it, even by a
 * process that never streamed the job).
 */
export const addChangeLogStreamGauges = defineMigration('20261206-engine-310-change-log-gauges', async (knex) => {
  await knex.schema.alterTable('change_log_streams', (t) => {
    t.bigInteger('lag_bytes').nullable();
    t.bigInteger('lag_at').nullable();
    t.string('source_config_id', 64).nullable();
  });
});
