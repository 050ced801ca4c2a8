
import type { OrmDatabase } from '@holdfast/orm-port';
import { NotFoundError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { SessionEntity, type Session } from '../entities/session.js';
import { UserEntity, type User } from '../entities/user.js';
import { sha256Hex } from '../crypto/scrypt-hash.js';
import { newId, newSessionToken } from '../crypto/tokens.js';

/** Session lifetime: 7 days from sign-in. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A session just created: the record plus the raw token for the cookie (never stored). */
export interface NewSession {
  session: Session;
  token: string;
}

/** Sessions: create at sign-in, resolve a cookie, list and revoke one's own. */
export class SessionService {
  constructor(
    private readonly database: OrmDatabase,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  private em(): EntityManager {
    return this.database.em();
  }

  /** `secondFactor`: the sign-in proved a second factor (`totp`, `backup-code`, `passkey`) at this moment. */
  async create(userId: string, ipAddress: string | null, userAgent: string | null, secondFactor: string | null = null): Promise<NewSession> {
    const em = this.em();
    const token = newSessionToken();
    const now = new Date();
    const session = em.create(SessionEntity, {
      id: newId(),
      userId,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(now.getTime() + this.ttlMs),
      ipAddress,
      userAgent,
      secondFactorAt: secondFactor ? now : null,
      secondFactorMethod: secondFactor,
      createdAt: now,
      updatedAt: now,
    });
    await em.flush();
    return { session, token };
  }

  /** The live session and its user for a cookie value; null when unknown, expired or the user is gone. */
  async resolve(token: string): Promise<{ session: Session; user: User } | null> {
    const em = this.em();
    const session = await em.findOne(SessionEntity, { tokenHash: sha256Hex(token) });
    if (!session) return null;
    if (session.expiresAt.getTime() <= Date.now()) {
      await em.nativeDelete(SessionEntity, { id: session.id });
      return null;
    }
    const user = await em.findOne(UserEntity, { id: session.userId });
    // A disabled user's sessions are deleted when they are disabled; this also covers one opened concurrently.
    return user && !user.disabled ? { session, user } : null;
  }

  /** Records that the session's user just proved a second factor again (step-up). */
  async markSecondFactor(sessionId: string, method: string, at = new Date()): Promise<void> {
    await this.em().nativeUpdate(SessionEntity, { id: sessionId }, { secondFactorAt: at, secondFactorMethod: method, updatedAt: at });
  }

  /** Ends every session of `userId` except the one with id `exceptSessionId`; resolves how many ended. */
  async revokeAllForUser(userId: string, exceptSessionId?: string): Promise<number> {
    return this.em().nativeDelete(SessionEntity, exceptSessionId ? { userId, id: { $ne: exceptSessionId } } : { userId });
  }

  /** The session holding this cookie value, or null. */
  async findByToken(token: string): Promise<Session | null> {
    return this.em().findOne(SessionEntity, { tokenHash: sha256Hex(token) });
  }

  /** Live sessions of a user, newest first. */
  async listForUser(userId: string): Promise<Session[]> {
    return this.em().find(SessionEntity, { userId, expiresAt: { $gt: new Date() } }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  /** Revokes a session of `userId`; 404 when it is not theirs, so others' session ids are not confirmed. */
  async revokeOwn(userId: string, sessionId: string): Promise<void> {
    const deleted = await this.em().nativeDelete(SessionEntity, { id: sessionId, userId });
    if (deleted === 0) throw new NotFoundError('Session not found');
  }

  /** Ends the session holding this cookie value; resolves whether one existed. */
  async revokeByToken(token: string): Promise<Session | null> {
    const em = this.em();
    const session = await em.findOne(SessionEntity, { tokenHash: sha256Hex(token) });
    if (!session) return null;
    await em.nativeDelete(SessionEntity, { id: session.id });
    return session;
  }

  /** Removes expired sessions; resolves how many. */
  async deleteExpired(now = new Date()): Promise<number> {
    return this.em().nativeDelete(SessionEntity, { expiresAt: { $lte: now } });
  }
}
