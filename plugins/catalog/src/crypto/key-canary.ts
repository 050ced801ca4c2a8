import type { EntityManager } from '@mikro-orm/knex';
import { KeyCanaryEntity } from '../entities/profiles.js';
import { type SecretBox, SecretBoxError } from './secret-box.js';

/** Row id and known text of the canary. */
export const CANARY_ID = 'system-key';
export const CANARY_TEXT = 'holdfast-system-key-canary-v1';

/** The message of a start with the wrong key; tests and operators look for it. */
export const WRONG_KEY_MESSAGE = 'the system encryption key does not match the one this database was created with';

/**
 * Seals the canary on the first start; on every later start opens it, so a wrong key stops the server before it
 * writes anything sealed with that key next to secrets sealed with the right one.
 */
export async function verifyKeyCanary(em: EntityManager, box: SecretBox): Promise<'created' | 'verified'> {
  const existing = await em.findOne(KeyCanaryEntity, { id: CANARY_ID });
  if (!existing) {
    em.create(KeyCanaryEntity, { id: CANARY_ID, sealed: box.seal(CANARY_TEXT), createdAt: new Date() });
    await em.flush();
    return 'created';
  }
  let opened: string | undefined;
  try {
    opened = box.open(existing.sealed);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
  }
  if (opened !== CANARY_TEXT) {
    const expected = existing.sealed.split(':')[1] ?? 'unknown';
    throw new Error(
      `Cannot start: ${WRONG_KEY_MESSAGE} (configured key fingerprint ${box.fingerprint}, database expects ${expected}). ` +
        'Set HOLDFAST_ENCRYPTION_KEY or HOLDFAST_ENCRYPTION_KEY_FILE to the original key, or restore <dataDir>/system.key.',
    );
  }
  return 'verified';
}
