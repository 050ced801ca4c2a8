import type { SealedSecretHolder } from '@holdfast/kernel';
import type { SqlEntityManager } from '@holdfast/orm-port';
import { TwoFactorEntity } from './entities/second-factor.js';
import { SsoProviderEntity } from './entities/sso-provider.js';

/**
 * Identity's values sealed with the system key: TOTP secrets and backup-code hashes, SSO client ids and secrets.
 * Registered under `SEALED_SECRET_HOLDERS` so a key rotation re-seals them with the catalog's in one transaction;
 * without it they could no longer be opened after the rotation.
 */
export const identitySealedSecrets: SealedSecretHolder<SqlEntityManager> = {
  label: 'two-factor and single sign-on secret(s)',
  async reseal(transaction, reseal) {
    let count = 0;
    for (const row of await transaction.find(TwoFactorEntity, {})) {
      row.secret = reseal(row.secret);
      row.backupCodes = reseal(row.backupCodes);
      count += 2;
    }
    for (const row of await transaction.find(SsoProviderEntity, {})) {
      row.clientId = reseal(row.clientId);
      count++;
      // SAML providers and public OIDC clients store no secret (an empty string, never sealed).
      if (row.clientSecret) {
        row.clientSecret = reseal(row.clientSecret);
        count++;
      }
    }
    return count;
  },
};
