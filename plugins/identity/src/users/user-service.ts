import type { OrmDatabase } from '@holdfast/orm-port';
import type { EventBus } from '@holdfast/kernel';
import { ConflictError, isKnownTimeZone, NotFoundError, ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { AccountEntity } from '../entities/account.js';
import { ApiKeyEntity } from '../entities/api-key.js';
import { GroupEntity } from '../entities/group.js';
import { PasskeyEntity, TwoFactorEntity } from '../entities/second-factor.js';
import { SessionEntity } from '../entities/session.js';
import { UserEntity, type User } from '../entities/user.js';
import { newId } from '../crypto/tokens.js';
import { scryptHash } from '../crypto/scrypt-hash.js';
import { addCredentialAccount, normalizeEmail, setPassword } from './passwords.js';

/** Fields accepted when a user is created. */
export interface NewUser {
  name: string;
  email: string;
  password?: string;
  groupId?: string | null;
  isSuperAdmin?: boolean;
}

/** Fields an administrator may change. */
export interface UserChanges {
  name?: string;
  email?: string;
  password?: string;
  groupId?: string | null;
  isSuperAdmin?: boolean;
  emailVerified?: boolean;
}

/** Preferences a user may change on themself (`PUT /api/users/me`). */
export interface UserPreferences {
  name?: string;
  timezone?: string;
  dateFormat?: string;
  timeFormat?: string;
  autoRedirectOnJobStart?: boolean;
}

/** Users: CRUD, preferences and the cascade on delete. */
export class UserService {
  constructor(
    private readonly database: OrmDatabase,
    private readonly events?: EventBus,
  ) {}

  private em(): EntityManager {
    return this.database.em();
  }

  async count(): Promise<number> {
    return this.em().count(UserEntity, {});
  }

  async list(): Promise<User[]> {
    return this.em().find(UserEntity, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  /** The user or undefined. */
  async find(id: string): Promise<User | undefined> {
    return (await this.em().findOne(UserEntity, { id })) ?? undefined;
  }

  /** The user; 404 `User not found` otherwise. */
  async get(id: string): Promise<User> {
    const user = await this.find(id);
    if (!user) throw new NotFoundError('User not found');
    return user;
  }

  /** Creates a user (and its password account when a password is given); emits `user_created`. */
  async create(input: NewUser, em: EntityManager = this.em()): Promise<User> {
    const email = normalizeEmail(input.email);
    if (await em.count(UserEntity, { email })) throw new ConflictError('A user with this email already exists');
    if (input.groupId) await this.assertGroupExists(em, input.groupId);
    // Hash before touching the database so the user and its password account land in one flush.
    const passwordHash = input.password === undefined ? undefined : await scryptHash(input.password);
    const now = new Date();
    const user = em.create(UserEntity, {
      id: newId(),
      name: input.name.trim(),
      email,
      isSuperAdmin: input.isSuperAdmin ?? false,
      groupId: input.groupId ?? null,
      createdAt: now,
      updatedAt: now,
    });
    if (passwordHash) addCredentialAccount(em, user.id, passwordHash);
    await em.flush();
    void this.events?.emit('user_created', { userName: user.name, email: user.email, timestamp: now.toISOString() });
    return user;
  }

  /** Applies administrator changes. */
  async update(id: string, changes: UserChanges): Promise<User> {
    const em = this.em();
    const user = await em.findOne(UserEntity, { id });
    if (!user) throw new NotFoundError('User not found');
    if (changes.email !== undefined) {
      const email = normalizeEmail(changes.email);
      if (email !== user.email && (await em.count(UserEntity, { email }))) {
        throw new ConflictError('A user with this email already exists');
      }
      user.email = email;
    }
    if (changes.groupId) await this.assertGroupExists(em, changes.groupId);
    if (changes.isSuperAdmin === false && user.isSuperAdmin && !user.disabled) await this.assertAnotherSuperAdmin(em, id);
    if (changes.name !== undefined) user.name = changes.name.trim();
    if (changes.groupId !== undefined) user.groupId = changes.groupId;
    if (changes.isSuperAdmin !== undefined) user.isSuperAdmin = changes.isSuperAdmin;
    if (changes.emailVerified !== undefined) user.emailVerified = changes.emailVerified;
    user.updatedAt = new Date();
    await em.flush();
    if (changes.password !== undefined) await setPassword(em, id, changes.password);
    return user;
  }

  /** Applies a user's own preferences. */
  async updatePreferences(id: string, preferences: UserPreferences): Promise<User> {
    const em = this.em();
    const user = await em.findOne(UserEntity, { id });
    if (!user) throw new NotFoundError('User not found');
    if (preferences.timezone !== undefined && preferences.timezone !== '' && !isKnownTimeZone(preferences.timezone)) {
      throw new ValidationError(`Unknown time zone "${preferences.timezone}"`, [{ path: 'timezone', message: 'not an IANA time zone' }]);
    }
    em.assign(user, { ...definedOnly(preferences), updatedAt: new Date() });
    await em.flush();
    return user;
  }

  /** Deletes a user with their API keys, sessions, accounts, second factors and passkeys, in one transaction. */
  async delete(id: string): Promise<User> {
    return this.em().transactional(async (em) => {
      const user = await em.findOne(UserEntity, { id });
      if (!user) throw new NotFoundError('User not found');
      if (user.isSuperAdmin && !user.disabled) await this.assertAnotherSuperAdmin(em, id);
      await em.nativeDelete(ApiKeyEntity, { userId: id });
      await em.nativeDelete(SessionEntity, { userId: id });
      await em.nativeDelete(AccountEntity, { userId: id });
      await em.nativeDelete(TwoFactorEntity, { userId: id });
      await em.nativeDelete(PasskeyEntity, { userId: id });
      await em.nativeDelete(UserEntity, { id });
      return user;
    });
  }

  /**
   * Disables or enables a user. Disabling ends every session of the user and makes their API keys fail
   * authentication (the keys are kept, so enabling the user again brings them back). Refuses to disable the last
   * enabled super administrator.
   */
  async setDisabled(id: string, disabled: boolean): Promise<User> {
    return this.em().transactional(async (em) => {
      const user = await em.findOne(UserEntity, { id });
      if (!user) throw new NotFoundError('User not found');
      if (disabled && user.isSuperAdmin && !user.disabled) await this.assertAnotherSuperAdmin(em, id);
      user.disabled = disabled;
      user.updatedAt = new Date();
      await em.flush();
      if (disabled) await em.nativeDelete(SessionEntity, { userId: id });
      return user;
    });
  }

  /** Sets a new password for a user and ends all of their sessions (an administrator's reset). */
  async resetPassword(id: string, password: string): Promise<User> {
    return this.em().transactional(async (em) => {
      const user = await em.findOne(UserEntity, { id });
      if (!user) throw new NotFoundError('User not found');
      await setPassword(em, id, password);
      user.updatedAt = new Date();
      await em.flush();
      await em.nativeDelete(SessionEntity, { userId: id });
      return user;
    });
  }

  /**
   * Removes every second factor of a user: the authenticator-app secret with its backup codes, and all passkeys.
   * Their next password sign-in needs no second factor; they can enroll again from their security page.
   */
  async resetSecondFactor(id: string): Promise<{ user: User; removed: { totp: boolean; passkeys: number } }> {
    return this.em().transactional(async (em) => {
      const user = await em.findOne(UserEntity, { id });
      if (!user) throw new NotFoundError('User not found');
      const totp = await em.nativeDelete(TwoFactorEntity, { userId: id });
      const passkeys = await em.nativeDelete(PasskeyEntity, { userId: id });
      user.twoFactorEnabled = false;
      user.passkeyTwoFactor = false;
      user.updatedAt = new Date();
      await em.flush();
      return { user, removed: { totp: totp > 0, passkeys } };
    });
  }

  private async assertGroupExists(em: EntityManager, groupId: string): Promise<void> {
    if (!(await em.count(GroupEntity, { id: groupId }))) {
      throw new ValidationError('Group not found', [{ path: 'groupId', message: 'no group with this id' }]);
    }
  }

  // The last enabled super administrator can be neither deleted, demoted nor disabled: nobody could administer
  // the instance after.
  private async assertAnotherSuperAdmin(em: EntityManager, exceptId: string): Promise<void> {
    if (!(await em.count(UserEntity, { isSuperAdmin: true, disabled: false, id: { $ne: exceptId } }))) {
      throw new ConflictError('This is the last enabled super administrator; promote or enable another administrator first');
    }
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
