import { defineMigration } from '@holdfast/orm-port';

/**
 * Issue 45: an encryption profile may hold only a public key (an age X25519 recipient). Such a row keeps an empty
 * sealed `secret_key` (so key rotation and exports treat every row alike) and the recipient in `public_key`.
 */
export const publicKeyProfilesMigration = defineMigration('20261206-catalog-006-public-key-profiles', async (knex) => {
  await knex.schema.alterTable('encryption_profiles', (t) => {
    t.string('public_key', 200).nullable();
  });
});
