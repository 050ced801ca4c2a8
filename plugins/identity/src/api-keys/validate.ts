import { UnauthorizedError, type KernelLogger } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { ApiKeyEntity, type ApiKey } from '../entities/api-key.js';
import { constantTimeEquals, isScryptHash, scryptHash, sha256Hex, verifyScryptHash } from '../crypto/scrypt-hash.js';
import { parseList } from '../groups/group-service.js';
import { displayPrefix, looksLikeApiKey } from './key-format.js';
import type { ApiKeyIdentity } from './types.js';

/** Hooks validation needs besides the entity manager. */
export interface ValidateContext {
  em: EntityManager;
  /** Fresh entity manager for the fire-and-forget `lastUsedAt` write (the request's may be gone by then). */
  freshEm: () => EntityManager;
  logger: KernelLogger;
  /** Receives the `lastUsedAt` write so shutdown and tests can wait for it. */
  track: (work: Promise<unknown>) => void;
}

async function matches(rawKey: string, row: ApiKey): Promise<boolean> {
  if (isScryptHash(row.hashedKey)) return verifyScryptHash(rawKey, row.hashedKey);
  return constantTimeEquals(sha256Hex(rawKey), row.hashedKey);
}

/**
 * SPEC "Authentication" 6. The salted hash cannot be searched, so candidates are found by the indexed 16-character
 * display prefix and each is checked with a constant-time comparison. A legacy unsalted SHA-256 record that matches
 * is rewritten with scrypt before the identity is returned. Throws `UnauthorizedError` with reason `invalid`,
 * `disabled` or `expired`; callers answer all three with the same 401.
 */
export async function validateApiKey(context: ValidateContext, rawKey: string): Promise<ApiKeyIdentity> {
  if (!looksLikeApiKey(rawKey)) throw new UnauthorizedError('not-a-key');
  const { em } = context;
  const candidates = await em.find(ApiKeyEntity, { prefix: displayPrefix(rawKey) });
  let found: ApiKey | undefined;
  for (const row of candidates) {
    if (await matches(rawKey, row)) {
      found = row;
      break;
    }
  }
  if (!found) throw new UnauthorizedError('invalid');
  if (!found.enabled) throw new UnauthorizedError('disabled');
  if (found.expiresAt && found.expiresAt.getTime() < Date.now()) throw new UnauthorizedError('expired');
  if (!isScryptHash(found.hashedKey)) await upgradeLegacyHash(em, found, rawKey);
  const keyId = found.id;
  context.track(
    context
      .freshEm()
      .nativeUpdate(ApiKeyEntity, { id: keyId }, { lastUsedAt: new Date() })
      .catch((error: unknown) => context.logger.error({ err: error, apiKeyId: keyId }, 'could not record API key lastUsedAt')),
  );
  return { id: found.id, name: found.name, userId: found.userId, permissions: parseList(found.permissions) };
}

// Conditional on the old hash, so two concurrent first uses do not both rewrite it.
async function upgradeLegacyHash(em: EntityManager, row: ApiKey, rawKey: string): Promise<void> {
  const upgraded = await scryptHash(rawKey);
  await em.nativeUpdate(ApiKeyEntity, { id: row.id, hashedKey: row.hashedKey }, { hashedKey: upgraded });
}
