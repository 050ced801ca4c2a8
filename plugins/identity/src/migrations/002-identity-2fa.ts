import { defineMigration } from '@holdfast/orm-port';

/**
 * Two-factor flows: `confirmed_at` (null while an enrollment waits for its first code) and `last_used_step` (the
 * TOTP time step last accepted, so the same code cannot be used twice).
 */
export const identityTwoFactorMigration = defineMigration('20261124-identity-2fa-002-confirmation', async (knex) => {
  await knex.schema.alterTable('two_factors', (t) => {
    t.datetime('confirmed_at', { useTz: true }).nullable();
    t.bigInteger('last_used_step').nullable();
  });
});
