import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A browser session. `tokenHash` is the SHA-256 hex of the cookie value; the raw token is never stored. */
export const SessionEntity = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: p.string().primary().length(36),
    userId: p.string().length(36).index('sessions_user_id_index'),
    tokenHash: p.string().length(64).unique('sessions_token_hash_unique'),
    expiresAt: p.datetime(),
    ipAddress: p.string().nullable(),
    userAgent: p.text().nullable(),
    /** When the user last proved a second factor in this session (sign-in or step-up); protected actions need it fresh. */
    secondFactorAt: p.datetime().nullable(),
    /** Which second factor that was: `totp`, `backup-code` or `passkey`. */
    secondFactorMethod: p.string().length(20).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored session row. */
export type Session = InferEntity<typeof SessionEntity>;
