import { defineMigration } from '@holdfast/orm-port';

/**
 * Issue 48: a source configuration may be bound to a remote agent that runs it (docs/agents.md). No foreign key: the
 * agents table belongs to the agents plugin, which may be absent; the catalog checks the id through the
 * `REMOTE_SOURCE_RUNNER` port when it is set.
 */
export const sourceAgentMigration = defineMigration('20261207-catalog-007-source-agent', async (knex) => {
  await knex.schema.alterTable('adapter_configs', (t) => {
    t.string('agent_id', 36).nullable();
  });
});
