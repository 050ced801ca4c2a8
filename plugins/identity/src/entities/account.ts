import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A linked sign-in account of a user. Provider `credential` holds the scrypt password hash in `password`;
 * SSO providers (later) hold their tokens here, encrypted with the system key.
 */
export const AccountEntity = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  uniques: [{ properties: ['providerId', 'accountId'], name: 'accounts_provider_account_unique' }],
  properties: {
    id: p.string().primary().length(36),
    userId: p.string().length(36).index('accounts_user_id_index'),
    providerId: p.string(),
    accountId: p.string(),
    password: p.text().nullable(),
    accessToken: p.text().nullable(),
    refreshToken: p.text().nullable(),
    idToken: p.text().nullable(),
    accessTokenExpiresAt: p.datetime().nullable(),
    refreshTokenExpiresAt: p.datetime().nullable(),
    scope: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored account row. */
export type Account = InferEntity<typeof AccountEntity>;
