import type { PluginMigration } from '@holdfast/kernel';
import { identitySchemaMigration } from './001-identity-schema.js';
import { identityTwoFactorMigration } from './002-identity-2fa.js';
import { identitySsoMigration } from './003-identity-sso.js';
import { identityAdministrationMigration } from './004-identity-administration.js';
import { identityProtectedActionsMigration } from './005-identity-protected-actions.js';

export { identitySchemaMigration, identityTwoFactorMigration };

/** The identity plugin's migrations in the order they apply. */
export const identityMigrations: readonly PluginMigration[] = [
  identitySchemaMigration,
  identityTwoFactorMigration,
  identitySsoMigration,
  identityAdministrationMigration,
  identityProtectedActionsMigration,
];
