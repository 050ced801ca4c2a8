import { defineMigration } from '@holdfast/orm-port';

/**
 * Single sign-on settings the original provider record has no column for: the OIDC scopes, the claim (OIDC) or
 * attribute (SAML) that carries group names and its mapping table to Holdfast groups, and the SAML attribute names
 * of email and display name. JSON text columns, like the rest of the schema.
 */
export const identitySsoMigration = defineMigration('20261124-identity-sso-003-group-mapping', async (knex) => {
  await knex.schema.alterTable('sso_providers', (t) => {
    t.text('scopes').nullable();
    t.string('group_claim', 255).nullable();
    t.text('group_mappings').notNullable().defaultTo('[]');
    t.text('attribute_mapping').nullable();
  });
});
