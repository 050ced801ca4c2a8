
import type { OrmDatabase } from '@holdfast/orm-port';
import type { EntityManager } from '@mikro-orm/core';
import { AccountEntity } from '../entities/account.js';
import { UserEntity, type User } from '../entities/user.js';
import { scryptHash, verifyScryptHash } from '../crypto/scrypt-hash.js';
import { newId } from '../crypto/tokens.js';

/** Provider id of the password account. */
export const CREDENTIAL_PROVIDER = 'credential';

/** Minimum password length accepted anywhere a password is set. */
export const MIN_PASSWORD_LENGTH = 8;

// A real scrypt hash of a random value, computed once, so a sign-in for an unknown email costs the same work.
let dummyHash: Promise<string> | undefined;
function getDummyHash(): Promise<string> {
  dummyHash ??= scryptHash(`dummy-${Math.random()}`);
  return dummyHash;
}

/** Sets (or replaces) the password of a user on its `credential` account. */
export async function setPassword(em: EntityManager, userId: string, password: string): Promise<void> {
  const hash = await scryptHash(password);
  const existing = await em.findOne(AccountEntity, { userId, providerId: CREDENTIAL_PROVIDER });
  if (existing) {
    existing.password = hash;
    existing.updatedAt = new Date();
  } else {
    addCredentialAccount(em, userId, hash);
  }
  await em.flush();
}

/** Queues a new `credential` account holding an already computed scrypt hash (flushed by the caller). */
export function addCredentialAccount(em: EntityManager, userId: string, passwordHash: string): void {
  const now = new Date();
  em.create(AccountEntity, {
    id: newId(),
    userId,
    providerId: CREDENTIAL_PROVIDER,
    accountId: userId,
    password: passwordHash,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * Checks an email and password. Always runs one scrypt verification, against a dummy hash when the email or its
 * password is unknown, so response time does not reveal which emails exist. Resolves the user or null.
 */
export async function verifyPassword(database: OrmDatabase, email: string, password: string): Promise<User | null> {
  return (await checkPassword(database, email, password)).user;
}

/** Why a password check failed (for the audit log only; the caller always gets the same answer). */
export type PasswordFailure = 'unknown-email' | 'no-password' | 'wrong-password';

/**
 * {@link verifyPassword} with the reason of a failure and the user the email named (null for an unknown email).
 * Same constant work either way.
 */
export async function checkPassword(
  database: OrmDatabase,
  email: string,
  password: string,
): Promise<{ user: User; target: User; failure?: undefined } | { user: null; target: User | null; failure: PasswordFailure }> {
  const em = database.em();
  const target = await em.findOne(UserEntity, { email: normalizeEmail(email) });
  const account = target ? await em.findOne(AccountEntity, { userId: target.id, providerId: CREDENTIAL_PROVIDER }) : null;
  const stored = account?.password ?? (await getDummyHash());
  const matches = await verifyScryptHash(password, stored);
  if (!target) return { user: null, target: null, failure: 'unknown-email' };
  if (!account?.password) return { user: null, target, failure: 'no-password' };
  return matches ? { user: target, target } : { user: null, target, failure: 'wrong-password' };
}

/** Emails compare case-insensitively: stored trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
