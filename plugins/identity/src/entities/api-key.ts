import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * An API key (SPEC "ApiKey"). `hashedKey` is `<salt_hex>:<hash_hex>` (scrypt) or, for legacy rows, an unsalted
 * SHA-256 hex digest. Lookup goes through the indexed 16-character `prefix`, then a constant-time hash check.
 */
export const ApiKeyEntity = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.string().primary().length(36),
    name: p.string(),
    prefix: p.string().length(16).index('api_keys_prefix_index'),
    hashedKey: p.string().unique('api_keys_hashed_key_unique'),
    permissions: p.text().default('[]'),
    userId: p.string().length(36).index('api_keys_user_id_index'),
    expiresAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    enabled: p.boolean().default(true),
    /** The key may delete backups and take the other protected actions (issue 45.4); false unless asked for at creation. */
    allowBackupDeletion: p.boolean().default(false),
    createdAt: p.datetime(),
  },
});

/** A stored API key row. */
export type ApiKey = InferEntity<typeof ApiKeyEntity>;
