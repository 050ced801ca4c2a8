import type { AdapterContext } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { SecretBox } from '../crypto/secret-box.js';
import { findCredential, openCredentialPayload } from './credential-store.js';
import { CREDENTIAL_PAYLOADS, type CredentialType } from './credential-types.js';

/**
 * Fields an adapter may write back into its profile, by type: renewed OAuth tokens only. The app's client id and
 * secret stay what the operator saved, so an adapter can never rewrite who it authenticates as.
 */
const WRITABLE_FIELDS: Partial<Record<CredentialType, readonly string[]>> = {
  OAUTH: ['accessToken', 'refreshToken', 'tokenExpiresAt', 'scope'],
};

/** Merges `patch` into the credential profile `id`, validates it with the type's schema and stores it sealed. */
export async function storeCredentialPatch(em: EntityManager, box: SecretBox, id: string, patch: Record<string, unknown>): Promise<void> {
  const row = await findCredential(em, id);
  const type = row.type as CredentialType;
  const writable = WRITABLE_FIELDS[type] ?? [];
  const refused = Object.keys(patch).filter((field) => !writable.includes(field));
  if (refused.length > 0) {
    throw new Error(`an adapter may not change ${refused.join(', ')} of a ${type} credential profile`);
  }
  const parsed = CREDENTIAL_PAYLOADS[type].safeParse({ ...openCredentialPayload(box, row), ...patch });
  if (!parsed.success) {
    // Field names only: the values are secrets.
    throw new Error(`refused credential update: invalid ${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')}`);
  }
  em.assign(row, { data: box.sealJson(parsed.data), updatedAt: new Date() });
  await em.flush();
}

/**
 * The `updateCredentials` callback of an adapter context whose profiles are `refs`: writes each role's patch into
 * the profile assigned under that role (`primary`, `ssh`). Undefined when no profile is assigned.
 */
export function credentialUpdater(
  em: () => EntityManager,
  box: () => SecretBox,
  refs: { primaryCredentialId?: string | null; sshCredentialId?: string | null },
): AdapterContext['updateCredentials'] {
  const ids: Record<string, string | null | undefined> = { primary: refs.primaryCredentialId, ssh: refs.sshCredentialId };
  if (!ids.primary && !ids.ssh) return undefined;
  return async (role, patch) => {
    const id = ids[role];
    if (!id) throw new Error(`no credential profile is assigned as "${role}"`);
    await storeCredentialPatch(em(), box(), id, patch);
  };
}
