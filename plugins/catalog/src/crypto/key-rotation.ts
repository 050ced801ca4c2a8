import type { SealedSecretHolder } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { CredentialProfileEntity, EncryptionProfileEntity, KeyCanaryEntity } from '../entities/profiles.js';
import { CANARY_ID, verifyKeyCanary } from './key-canary.js';
import { SecretBox } from './secret-box.js';

/** How many sealed values a rotation re-encrypted, by table. */
export interface RotationReport {
  adapterSecrets: number;
  credentialProfiles: number;
  encryptionProfiles: number;
  /** Values other plugins store sealed (`SEALED_SECRET_HOLDERS`), by their label. */
  otherSecrets: Array<{ label: string; count: number }>;
}

/**
 * Re-encrypts every stored secret from `current` to `next` in one transaction: adapter secret fields, credential
 * payloads, encryption profile keys, the values of other plugins' `holders` (identity's TOTP and SSO secrets) and
 * the canary. Fails before writing anything when `current` is not the key the database was created with; a value
 * that does not open rolls the whole rotation back.
 */
export async function rotateSystemKey(
  em: EntityManager,
  current: SecretBox,
  next: SecretBox,
  holders: readonly SealedSecretHolder[] = [],
): Promise<RotationReport> {
  await verifyKeyCanary(em.fork(), current);
  const report: RotationReport = { adapterSecrets: 0, credentialProfiles: 0, encryptionProfiles: 0, otherSecrets: [] };
  const reseal = (value: string) => (SecretBox.isSealed(value) ? next.seal(current.open(value)) : value);
  await em.transactional(async (tx) => {
    for (const row of await tx.find(AdapterConfigEntity, {})) {
      const config = JSON.parse(row.config) as Record<string, unknown>;
      for (const [field, value] of Object.entries(config)) {
        if (!SecretBox.isSealed(value)) continue;
        config[field] = next.seal(current.open(value));
        report.adapterSecrets++;
      }
      row.config = JSON.stringify(config);
    }
    for (const row of await tx.find(CredentialProfileEntity, {})) {
      row.data = next.seal(current.open(row.data));
      report.credentialProfiles++;
    }
    for (const row of await tx.find(EncryptionProfileEntity, {})) {
      row.secretKey = next.seal(current.open(row.secretKey));
      report.encryptionProfiles++;
    }
    for (const holder of holders) report.otherSecrets.push({ label: holder.label, count: await holder.reseal(tx, reseal) });
    const canary = await tx.findOneOrFail(KeyCanaryEntity, { id: CANARY_ID });
    canary.sealed = next.seal(current.open(canary.sealed));
  });
  return report;
}
