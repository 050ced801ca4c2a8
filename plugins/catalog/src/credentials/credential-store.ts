import { NotFoundError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { SecretBox } from '../crypto/secret-box.js';
import { CredentialProfileEntity, type CredentialProfileRow } from '../entities/profiles.js';

/** A credential profile row or a 404 naming it. */
export async function findCredential(em: EntityManager, id: string, field = 'Credential profile'): Promise<CredentialProfileRow> {
  const row = await em.findOne(CredentialProfileEntity, { id });
  if (!row) throw new NotFoundError(`${field} ${id} not found`);
  return row;
}

/** The decrypted payload of a credential profile. */
export function openCredentialPayload(box: SecretBox, row: CredentialProfileRow): Record<string, unknown> {
  return box.openJson<Record<string, unknown>>(row.data);
}

/** Decrypted credential payloads of an adapter config by role (`primary`, `ssh`), as the adapter context wants. */
export async function credentialsByRole(
  em: EntityManager,
  box: SecretBox,
  refs: { primaryCredentialId?: string | null; sshCredentialId?: string | null },
): Promise<Record<string, Record<string, unknown>>> {
  const credentials: Record<string, Record<string, unknown>> = {};
  if (refs.primaryCredentialId) {
    const row = await findCredential(em, refs.primaryCredentialId);
    credentials.primary = { type: row.type, ...openCredentialPayload(box, row) };
  }
  if (refs.sshCredentialId) {
    const row = await findCredential(em, refs.sshCredentialId);
    credentials.ssh = { type: row.type, ...openCredentialPayload(box, row) };
  }
  return credentials;
}
