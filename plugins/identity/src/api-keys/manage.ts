import { NotFoundError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { ApiKeyEntity, type ApiKey } from '../entities/api-key.js';
import { scryptHash } from '../crypto/scrypt-hash.js';
import { assertCatalogPermissions } from './create.js';
import { displayPrefix, generateRawKey } from './key-format.js';
import { toApiKeyView, type ApiKeyView, type IssuedApiKey } from './types.js';

async function load(em: EntityManager, id: string): Promise<ApiKey> {
  const row = await em.findOne(ApiKeyEntity, { id });
  if (!row) throw new NotFoundError('API key not found');
  return row;
}

/** All keys, or the keys of one user; newest first. */
export async function listApiKeys(em: EntityManager, userId?: string): Promise<ApiKeyView[]> {
  const rows = await em.find(ApiKeyEntity, userId ? { userId } : {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return rows.map(toApiKeyView);
}

/** One key; 404 `API key not found` otherwise. */
export async function getApiKey(em: EntityManager, id: string): Promise<ApiKeyView> {
  return toApiKeyView(await load(em, id));
}

/** Enables or disables a key. */
export async function toggleApiKey(em: EntityManager, id: string, enabled: boolean): Promise<ApiKeyView> {
  const row = await load(em, id);
  row.enabled = enabled;
  await em.flush();
  return toApiKeyView(row);
}

/** Replaces the whole permission set of a key. */
export async function updateApiKeyPermissions(em: EntityManager, id: string, permissions: string[]): Promise<ApiKeyView> {
  assertCatalogPermissions(permissions);
  const row = await load(em, id);
  row.permissions = JSON.stringify([...new Set(permissions)]);
  await em.flush();
  return toApiKeyView(row);
}

/** Issues a new raw key for the same record; the old raw key stops working at once. */
export async function rotateApiKey(em: EntityManager, id: string): Promise<IssuedApiKey> {
  const row = await load(em, id);
  const rawKey = generateRawKey();
  row.prefix = displayPrefix(rawKey);
  row.hashedKey = await scryptHash(rawKey);
  await em.flush();
  return { apiKey: toApiKeyView(row), rawKey };
}

/** Deletes a key; resolves the deleted record. */
export async function deleteApiKey(em: EntityManager, id: string): Promise<ApiKeyView> {
  const row = await load(em, id);
  await em.nativeDelete(ApiKeyEntity, { id });
  return toApiKeyView(row);
}
