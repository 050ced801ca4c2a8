import { defineMigration } from '@holdfast/orm-port';

/**
 * Protected deletion (issue 45.4): `sessions.second_factor_at`, when the session's user last proved a second factor
 * (sign-in with TOTP, a backup code or a passkey, or a step-up) and `second_factor_method` (which one), and `api_keys.allow_backup_deletion`, the key option
 * without which a key cannot delete backups or take the other protected actions. Existing keys get false.
 */
export const identityProtectedActionsMigration = defineMigration('20261206-identity-005-protected-actions', async (knex) => {
  await knex.schema.alterTable('sessions', (t) => {
    t.datetime('second_factor_at', { useTz: true }).nullable();
    t.string('second_factor_method', 20).nullable();
  });
  await knex.schema.alterTable('api_keys', (t) => {
    t.boolean('allow_backup_deletion').notNullable().defaultTo(false);
  });
});
