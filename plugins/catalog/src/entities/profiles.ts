import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A credential profile (SPEC "CredentialProfile"); `data` is the sealed JSON payload. */
export const CredentialProfileEntity = defineEntity({
  name: 'CredentialProfile',
  tableName: 'credential_profiles',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('credential_profiles_name_unique'),
    description: p.text().nullable(),
    type: p.string(),
    data: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored credential profile row. */
export type CredentialProfileRow = InferEntity<typeof CredentialProfileEntity>;

/**
 * An encryption profile (SPEC "EncryptionProfile"); `secretKey` is the sealed 32-byte key (hex inside). A public-key
 * profile (issue 45) has `publicKey` (an age `age1...` recipient) and an empty string sealed in `secretKey`.
 */
export const EncryptionProfileEntity = defineEntity({
  name: 'EncryptionProfile',
  tableName: 'encryption_profiles',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('encryption_profiles_name_unique'),
    description: p.text().nullable(),
    secretKey: p.text(),
    publicKey: p.string().length(200).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored encryption profile row. */
export type EncryptionProfileRow = InferEntity<typeof EncryptionProfileEntity>;

/**
 * The key canary: a known text sealed with the system key at first start. Opening it at every start proves the
 * configured key is the one this database was created with, before any real secret is touched.
 */
export const KeyCanaryEntity = defineEntity({
  name: 'KeyCanary',
  tableName: 'system_key_canary',
  properties: {
    id: p.string().primary(),
    sealed: p.text(),
    createdAt: p.datetime(),
  },
});

/** The stored canary row. */
export type KeyCanaryRow = InferEntity<typeof KeyCanaryEntity>;
