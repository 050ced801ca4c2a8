import { defineMigration } from '@holdfast/orm-port';

/**
 * Issue 48 scope 3: how a job's destination receives the backup of a source bound to an agent: `relay` (through the
 * server, the default: it always works and sends the agent no credential) or `direct` (uploaded by the agent itself).
 * Existing links keep relaying.
 */
export const destinationTransferMigration = defineMigration('20261207-catalog-008-destination-transfer', async (knex) => {
  await knex.schema.alterTable('job_destinations', (t) => {
    t.string('transfer', 16).notNullable().defaultTo('relay');
  });
});
