import { defineMigration } from '@holdfast/orm-port';

/**
 * Administration (issue 47.5): `users.disabled` (a disabled user cannot sign in, their sessions and API keys stop
 * working), and on `audit_logs` the actor's display name and the resource's name as they were when the entry was
 * written (`actor_name`: user name or API key name, or the email tried on a failed sign-in; `resource_name`).
 */
export const identityAdministrationMigration = defineMigration('20261205-identity-004-administration', async (knex) => {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('disabled').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('audit_logs', (t) => {
    t.string('actor_name', 255).nullable();
    t.string('resource_name', 255).nullable();
  });
});
