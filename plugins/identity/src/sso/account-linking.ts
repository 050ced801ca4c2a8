import { SignInFailure } from '../audit/sign-in-failure.js';
import type { EntityManager } from '@mikro-orm/core';
import { newId } from '../crypto/tokens.js';
import { AccountEntity } from '../entities/account.js';
import { GroupEntity } from '../entities/group.js';
import { UserEntity, type User } from '../entities/user.js';
import type { UserService } from '../users/user-service.js';
import type { ResolvedSsoProvider } from './provider-store.js';
import type { ExternalIdentity } from './types.js';

/** The user an external identity signs in as, and how it was found. */
export interface LinkedUser {
  user: User;
  /** `account`: a known link; `email`: linked now by verified email; `provisioned`: created now. */
  via: 'account' | 'email' | 'provisioned';
}

/** Account rows of SSO providers are named `sso:<providerId>` (the password account is `credential`). */
export function ssoAccountProviderId(providerId: string): string {
  return `sso:${providerId}`;
}

function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Finds or creates the Holdfast user of an external identity:
 * 1. a linked account (`sso:<providerId>`, subject) signs in as its user;
 * 2. else an existing user with the same email is linked, only when the provider verified the email;
 * 3. else a user is created when the provider allows provisioning, and refused otherwise.
 * The provider's domain restriction applies to every path.
 */
export async function linkExternalIdentity(
  em: EntityManager,
  users: UserService,
  provider: ResolvedSsoProvider,
  identity: ExternalIdentity,
): Promise<LinkedUser> {
  const providerId = provider.row.providerId;
  const email = identity.email?.trim().toLowerCase();
  if (provider.domains.length > 0 && (!email || !provider.domains.includes(emailDomain(email)))) {
    throw new SignInFailure(403, `Sign-in through "${providerId}" is limited to ${provider.domains.map((d) => `@${d}`).join(', ')} addresses`, 'sso-domain-not-allowed', { email });
  }
  const accountProviderId = ssoAccountProviderId(providerId);
  const account = await em.findOne(AccountEntity, { providerId: accountProviderId, accountId: identity.subject });
  if (account) {
    const user = await em.findOne(UserEntity, { id: account.userId });
    if (user) return { user, via: 'account' };
    await em.nativeDelete(AccountEntity, { id: account.id });
  }
  if (!email) throw new SignInFailure(403, `The identity provider "${providerId}" sent no email address for this account`, 'sso-no-email');

  const existing = await em.findOne(UserEntity, { email });
  if (existing) {
    if (!identity.emailVerified) {
      throw new SignInFailure(403, `The identity provider "${providerId}" has not verified ${email}; it cannot be linked to the existing account`, 'sso-email-unverified', { userId: existing.id, email });
    }
    await addAccount(em, existing.id, accountProviderId, identity.subject);
    return { user: existing, via: 'email' };
  }

  if (!provider.row.allowProvisioning) {
    throw new SignInFailure(403, `No Holdfast account exists for ${email}, and provider "${providerId}" does not create accounts (allowProvisioning is off); ask an administrator to create it`, 'sso-no-account', { email });
  }
  const name = identity.name?.trim() || email.split('@')[0]!;
  let user = await users.create({ name, email });
  if (identity.emailVerified) user = await users.update(user.id, { emailVerified: true });
  await addAccount(em, user.id, accountProviderId, identity.subject);
  return { user, via: 'provisioned' };
}

async function addAccount(em: EntityManager, userId: string, providerId: string, accountId: string): Promise<void> {
  const now = new Date();
  em.create(AccountEntity, { id: newId(), userId, providerId, accountId, createdAt: now, updatedAt: now });
  await em.flush();
}

/**
 * Sets the user's group from the provider's mapping table (SPEC users hold one group): the first mapping row whose
 * value the identity carries wins; none matching clears the group. Only when the provider has a group claim and at
 * least one mapping row, so a provider without mapping never touches groups assigned by hand. Super administrators
 * keep their flag either way. Resolves the group change, or undefined when nothing changed.
 */
export async function syncGroupFromClaims(
  em: EntityManager,
  user: User,
  provider: ResolvedSsoProvider,
  groups: string[] | undefined,
): Promise<{ from: string | null; to: string | null } | undefined> {
  if (!provider.row.groupClaim || provider.groupMappings.length === 0) return undefined;
  const held = new Set(groups ?? []);
  // A mapping row whose group was deleted since is skipped rather than pointing the user at a missing group.
  const existing = new Set((await em.find(GroupEntity, { id: { $in: provider.groupMappings.map((m) => m.groupId) } })).map((g) => g.id));
  const target = provider.groupMappings.find((mapping) => held.has(mapping.claimValue) && existing.has(mapping.groupId))?.groupId ?? null;
  const current = user.groupId ?? null;
  if (target === current) return undefined;
  // A native update: the row may have been loaded by another entity manager (the user service's, on provisioning).
  const updatedAt = new Date();
  await em.nativeUpdate(UserEntity, { id: user.id }, { groupId: target, updatedAt });
  user.groupId = target;
  user.updatedAt = updatedAt;
  return { from: current, to: target };
}
