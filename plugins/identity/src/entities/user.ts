import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A person who signs in (SPEC "User and Group"). Passwords live on the `credential` account, not here. */
export const UserEntity = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().primary().length(36),
    name: p.string(),
    email: p.string().unique('users_email_unique'),
    emailVerified: p.boolean().default(false),
    image: p.text().nullable(),
    /** IANA name; empty means the server default. */
    timezone: p.string().default(''),
    dateFormat: p.string().default('P'),
    timeFormat: p.string().default('p'),
    autoRedirectOnJobStart: p.boolean().default(true),
    twoFactorEnabled: p.boolean().nullable(),
    passkeyTwoFactor: p.boolean().nullable(),
    isSuperAdmin: p.boolean().default(false),
    /** A disabled user cannot sign in; their sessions and API keys stop working (issue 47.5). */
    disabled: p.boolean().default(false),
    groupId: p.string().length(36).nullable().index('users_group_id_index'),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored user row. */
export type User = InferEntity<typeof UserEntity>;
