import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * TOTP secret and backup codes of a user, both sealed with the system key (the backup codes as SHA-256 hashes).
 * `confirmedAt` is null while an enrollment waits for its first code; `lastUsedStep` rejects a replayed code.
 */
export const TwoFactorEntity = defineEntity({
  name: 'TwoFactor',
  tableName: 'two_factors',
  properties: {
    id: p.string().primary().length(36),
    userId: p.string().length(36).unique('two_factors_user_id_unique'),
    secret: p.text(),
    backupCodes: p.text(),
    createdAt: p.datetime(),
    confirmedAt: p.datetime().nullable(),
    lastUsedStep: p.bigint('number').nullable(),
  },
});

/** A stored two-factor row. */
export type TwoFactor = InferEntity<typeof TwoFactorEntity>;

/** A WebAuthn passkey credential (public key as base64url COSE, credential id as base64url). */
export const PasskeyEntity = defineEntity({
  name: 'Passkey',
  tableName: 'passkeys',
  properties: {
    id: p.string().primary().length(36),
    userId: p.string().length(36).index('passkeys_user_id_index'),
    name: p.string().nullable(),
    credentialId: p.string().unique('passkeys_credential_id_unique'),
    publicKey: p.text(),
    counter: p.integer().default(0),
    deviceType: p.string(),
    backedUp: p.boolean().default(false),
    transports: p.string().nullable(),
    aaguid: p.string().nullable(),
    createdAt: p.datetime(),
  },
});

/** A stored passkey row. */
export type Passkey = InferEntity<typeof PasskeyEntity>;

/** A short-lived verification value: pending two-factor sign-ins and WebAuthn challenges. */
export const VerificationEntity = defineEntity({
  name: 'Verification',
  tableName: 'verifications',
  properties: {
    id: p.string().primary().length(36),
    identifier: p.string().index('verifications_identifier_index'),
    value: p.text(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored verification row. */
export type Verification = InferEntity<typeof VerificationEntity>;
