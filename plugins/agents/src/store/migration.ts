import { defineMigration } from '@holdfast/orm-port';

/** The agents plugin's one table. */
export const AGENTS_TABLE = 'agents';

/**
 * `agents`. Names are unique among agents that are not revoked (a partial unique index, the same statement on
 * SQLite and PostgreSQL): a revoked agent keeps its row for the audit trail and so its key stays refused, but its
 * name can be given to a new agent.
 */
export const createAgentsTable = defineMigration('20261207-agents-001-agents', async (knex) => {
  await knex.schema.createTable(AGENTS_TABLE, (t) => {
    t.string('id', 36).primary();
    t.string('name', 100).notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.string('status', 16).notNullable();
    t.string('public_key', 64).nullable();
    t.string('version', 64).nullable();
    t.string('host', 255).nullable();
    t.text('adapters').notNullable().defaultTo('[]');
    t.string('enrollment_token_hash', 64).nullable().unique('agents_enrollment_token_hash_unique');
    t.bigInteger('enrollment_expires_at').nullable();
    t.datetime('last_seen_at', { useTz: true }).nullable();
    t.datetime('revoked_at', { useTz: true }).nullable();
    t.datetime('created_at', { useTz: true }).notNullable();
    t.datetime('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`create unique index agents_live_name_unique on ${AGENTS_TABLE} (name) where revoked_at is null`);
});

/**
 * `agents.holder_id` (several server processes on one PostgreSQL): the process holding an online agent's connection.
 * With `last_seen_at` (refreshed by that process every ping period) it tells which process runs the agent's calls and
 * whether that process is still alive.
 */
export const addAgentHolder = defineMigration('20261207-agents-002-holder', async (knex) => {
  await knex.schema.alterTable(AGENTS_TABLE, (t) => {
    t.string('holder_id', 64).nullable();
  });
});

/**
 * `agents.health` (issue 48 scope 1, docs/agents.md "Agent health"): the agent's latest health report as JSON, with
 * the time the server received it; null before the first report.
 */
export const addAgentHealth = defineMigration('20261207-agents-003-health', async (knex) => {
  await knex.schema.alterTable(AGENTS_TABLE, (t) => {
    t.text('health').nullable();
  });
});
