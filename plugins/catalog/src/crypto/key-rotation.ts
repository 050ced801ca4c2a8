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
}

/**
 * Re-encrypts every stored secret from `current` to `next` in one transaction: adapter secret fields, credential
 * payloads, encryption profile keys and the canary. Fails before writing anything when `current` is not the key
 * the database was created with.
 */
export async function rotateSystemKey(em: EntityManager, current: SecretBox, next: SecretBox): Promise<RotationReport> {
  await verifyKeyCanary(em.fork(), current);
  const report: RotationReport = { adapterSecrets: 0, credentialProfiles: 0, encryptionProfiles: 0 };
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
    const canary = await tx.findOneOrFail(KeyCanaryEntity, { id: CANARY_ID });
    canary.sealed = next.seal(current.open(canary.sealed));
  });
  return report;
}
