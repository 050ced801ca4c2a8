import { defineMigration } from '@holdfast/orm-port';

/**
 * `executions.routed_to` (issue 48, several server processes): a Pending run handed over to the process holding the
 * connection of its source's agent. Only that process claims it while it is alive (see ExecutionStore.claim).
 */
export const addExecutionRouting = defineMigration('20261207-engine-300-agent-routing', async (knex) => {
  await knex.schema.alterTable('executions', (t) => {
    t.string('routed_to', 64).nullable();
  });
});
