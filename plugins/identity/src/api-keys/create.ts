import { ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { ApiKeyEntity } from '../entities/api-key.js';
import { scryptHash } from '../crypto/scrypt-hash.js';
import { newId } from '../crypto/tokens.js';
import { unknownPermissions } from '../permissions/catalog.js';
import { displayPrefix, generateRawKey } from './key-format.js';
import { toApiKeyView, type IssuedApiKey, type NewApiKey } from './types.js';

/** Rejects permissions outside the catalog with a 400 naming them. */
export function assertCatalogPermissions(permissions: readonly string[]): void {
  const unknown = unknownPermissions(permissions);
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown permission(s): ${unknown.join(', ')}`,
      unknown.map((name) => ({ path: 'permissions', message: `unknown permission "${name}"` })),
    );
  }
}

/** Creates a key for `userId`; the raw key is in the result and nowhere else. */
export async function createApiKey(em: EntityManager, userId: string, input: NewApiKey): Promise<IssuedApiKey> {
  assertCatalogPermissions(input.permissions);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw new ValidationError('expiresAt must be in the future', [{ path: 'expiresAt', message: 'must be in the future' }]);
  }
  const rawKey = generateRawKey();
  const row = em.create(ApiKeyEntity, {
    id: newId(),
    name: input.name.trim(),
    prefix: displayPrefix(rawKey),
    hashedKey: await scryptHash(rawKey),
    permissions: JSON.stringify([...new Set(input.permissions)]),
    userId,
    expiresAt: input.expiresAt ?? null,
    lastUsedAt: null,
    enabled: true,
    allowBackupDeletion: input.allowBackupDeletion ?? false,
    createdAt: new Date(),
  });
  await em.flush();
  return { apiKey: toApiKeyView(row), rawKey };
}
