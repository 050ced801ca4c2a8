import { ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { EncryptionProfileEntity } from '../entities/profiles.js';

/**
 * A test restore reads the newest backup back on the server, which a public-key profile (issue 45) makes impossible:
 * the server holds no key for it. Saying so when the job is saved beats a test restore failing on every schedule.
 */
export async function checkTestRestoreEncryption(em: EntityManager, fields: { encryptionProfileId?: string | null; hasTestRestore: boolean }): Promise<void> {
  if (!fields.hasTestRestore || !fields.encryptionProfileId) return;
  const profile = await em.findOne(EncryptionProfileEntity, { id: fields.encryptionProfileId });
  if (!profile?.publicKey) return;
  const message = `"${profile.name}" is a public-key profile: the server cannot read its backups back, so the job cannot have a test restore (remove testRestore or choose a symmetric profile)`;
  throw new ValidationError(`Invalid request: body.testRestore: ${message}`, [{ path: 'body.testRestore', message }]);
}
