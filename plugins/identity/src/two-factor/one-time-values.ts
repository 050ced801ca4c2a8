import type { OrmDatabase } from '@holdfast/orm-port';
import type { EntityManager } from '@mikro-orm/core';
import { newId } from '../crypto/tokens.js';
import { VerificationEntity } from '../entities/second-factor.js';

/**
 * Short-lived single-use values in the `verifications` table: pending two-factor sign-ins and WebAuthn
 * challenges. Stored under an identifier the caller derives (a hash of a token, or the challenge itself), so a
 * database reader learns nothing that completes a sign-in.
 */
export class OneTimeValues {
  constructor(private readonly database: OrmDatabase) {}

  private em(): EntityManager {
    return this.database.em();
  }

  async put(identifier: string, value: Record<string, unknown>, ttlMs: number): Promise<Date> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMs);
    const em = this.em();
    em.create(VerificationEntity, { id: newId(), identifier, value: JSON.stringify(value), expiresAt, createdAt: now, updatedAt: now });
    await em.flush();
    return expiresAt;
  }

  /** The live value under `identifier` without using it up, or null (expired rows are removed on sight). */
  async peek<T>(identifier: string): Promise<T | null> {
    const row = await this.em().findOne(VerificationEntity, { identifier }, { orderBy: { createdAt: 'desc' } });
    if (!row) return null;
    if (row.expiresAt.getTime() <= Date.now()) {
      await this.em().nativeDelete(VerificationEntity, { identifier });
      return null;
    }
    return JSON.parse(row.value) as T;
  }

  /**
   * Uses the value up: resolves it only for the one caller whose delete removed the row, so two concurrent
   * requests with the same token or challenge cannot both succeed.
   */
  async take<T>(identifier: string): Promise<T | null> {
    const value = await this.peek<T>(identifier);
    if (value === null) return null;
    const deleted = await this.em().nativeDelete(VerificationEntity, { identifier });
    return deleted > 0 ? value : null;
  }

  /** Removes expired values; resolves how many. */
  async deleteExpired(now = new Date()): Promise<number> {
    return this.em().nativeDelete(VerificationEntity, { expiresAt: { $lte: now } });
  }
}
