import type { OrmDatabase } from '@holdfast/orm-port';
import { ConflictError, HttpError, NotFoundError, type RateLimiter, type SecretSealer } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { newId } from '../crypto/tokens.js';
import { TwoFactorEntity, type TwoFactor } from '../entities/second-factor.js';
import { UserEntity, type User } from '../entities/user.js';
import { hashBackupCode, newBackupCodes } from './backup-codes.js';
import { manualKeyOf, matchingStep, newTotpSecret, otpauthUri } from './totp.js';

/** What a user sees of their two-factor setup: never the secret or a code. */
export interface TwoFactorStatus {
  enabled: boolean;
  enrollmentPending: boolean;
  backupCodesRemaining: number;
}

/** A second-factor answer: a current TOTP code or one backup code. */
export interface SecondFactorAnswer {
  code?: string;
  backupCode?: string;
}

/** Which kind of answer was accepted (for the audit entry). */
export type SecondFactorKind = 'totp' | 'backup-code';

/** Gives the system-key sealer, or undefined when no plugin registered one. */
export type SealerSource = () => SecretSealer | undefined;

const INVALID = 'Invalid two-factor code';

/**
 * TOTP with backup codes. The secret and the backup-code hashes are sealed with the system key. Every check of
 * a code first takes a point from the per-user `auth` rate-limit bucket, so guessing is cut off after a few
 * attempts a minute whatever IP address they come from.
 */
export class TwoFactorService {
  constructor(
    private readonly database: OrmDatabase,
    private readonly sealer: SealerSource,
    private readonly rateLimiter: RateLimiter,
  ) {}

  private em(): EntityManager {
    return this.database.em();
  }

  private box(): SecretSealer {
    const sealer = this.sealer();
    if (!sealer) throw new HttpError(503, 'Two-factor sign-in needs the system encryption key, which no loaded plugin provides');
    return sealer;
  }

  private async row(userId: string, em = this.em()): Promise<TwoFactor | null> {
    return em.findOne(TwoFactorEntity, { userId });
  }

  private backupHashes(row: TwoFactor): string[] {
    return JSON.parse(this.box().open(row.backupCodes)) as string[];
  }

  async status(userId: string): Promise<TwoFactorStatus> {
    const row = await this.row(userId);
    return {
      enabled: Boolean(row?.confirmedAt),
      enrollmentPending: Boolean(row && !row.confirmedAt),
      backupCodesRemaining: row?.confirmedAt ? this.backupHashes(row).length : 0,
    };
  }

  /** Whether sign-in of this user needs a TOTP or backup code. */
  async isEnabled(userId: string): Promise<boolean> {
    return Boolean((await this.row(userId))?.confirmedAt);
  }

  /** Starts (or restarts) an enrollment: a new secret, not active until {@link confirm} sees a code from it. */
  async beginEnrollment(user: User): Promise<{ otpauthUri: string; manualKey: string }> {
    const em = this.em();
    const existing = await this.row(user.id, em);
    if (existing?.confirmedAt) throw new ConflictError('Two-factor sign-in is already on; disable it first to enroll again');
    const secret = newTotpSecret();
    const sealed = this.box().seal(secret);
    if (existing) {
      existing.secret = sealed;
      existing.backupCodes = this.box().seal('[]');
      existing.createdAt = new Date();
      existing.lastUsedStep = null;
    } else {
      em.create(TwoFactorEntity, { id: newId(), userId: user.id, secret: sealed, backupCodes: this.box().seal('[]'), createdAt: new Date(), confirmedAt: null, lastUsedStep: null });
    }
    await em.flush();
    return { otpauthUri: otpauthUri(secret, user.email), manualKey: manualKeyOf(secret) };
  }

  /** Activates a pending enrollment with its first code; resolves the backup codes, shown this once. */
  async confirm(userId: string, code: string): Promise<string[]> {
    const em = this.em();
    const row = await this.row(userId, em);
    if (!row) throw new NotFoundError('No two-factor enrollment was started');
    if (row.confirmedAt) throw new ConflictError('Two-factor sign-in is already on');
    await this.spendAttempt(userId);
    const step = matchingStep(this.box().open(row.secret), code);
    if (step === null) throw new HttpError(400, `${INVALID}: check the clock of the device and enter the current code`);
    const codes = newBackupCodes();
    row.confirmedAt = new Date();
    row.lastUsedStep = step;
    row.backupCodes = this.box().seal(JSON.stringify(codes.map(hashBackupCode)));
    await em.flush();
    await this.setUserFlag(userId, true);
    return codes;
  }

  /** Replaces every backup code with a new set; the old ones stop working. */
  async regenerateBackupCodes(userId: string): Promise<string[]> {
    const em = this.em();
    const row = await this.row(userId, em);
    if (!row?.confirmedAt) throw new ConflictError('Two-factor sign-in is not on');
    const codes = newBackupCodes();
    row.backupCodes = this.box().seal(JSON.stringify(codes.map(hashBackupCode)));
    await em.flush();
    return codes;
  }

  /** Turns two-factor sign-in off (or abandons a pending enrollment). */
  async disable(userId: string): Promise<void> {
    const deleted = await this.em().nativeDelete(TwoFactorEntity, { userId });
    if (deleted === 0) throw new ConflictError('Two-factor sign-in is not on');
    await this.setUserFlag(userId, false);
  }

  /**
   * Checks a second-factor answer of a user with two-factor on. A TOTP code is accepted once: its time step must
   * be later than the last one used (409 otherwise). A backup code is removed when used. Throws 401 when it does
   * not match and 429 once the attempts of the minute are spent.
   */
  async verify(userId: string, answer: SecondFactorAnswer): Promise<SecondFactorKind> {
    const row = await this.row(userId);
    if (!row?.confirmedAt) throw new HttpError(401, INVALID);
    await this.spendAttempt(userId);
    if (answer.code !== undefined) {
      await this.useTotpCode(row, answer.code);
      return 'totp';
    }
    if (answer.backupCode !== undefined) {
      await this.useBackupCode(row, answer.backupCode);
      return 'backup-code';
    }
    throw new HttpError(400, 'Send `code` (from the authenticator app) or `backupCode`');
  }

  private async useTotpCode(row: TwoFactor, code: string): Promise<void> {
    const step = matchingStep(this.box().open(row.secret), code);
    if (step === null) throw new HttpError(401, INVALID);
    // Conditional update: of two requests with the same code only the first moves the step on.
    const updated = await this.em().nativeUpdate(
      TwoFactorEntity,
      { id: row.id, $or: [{ lastUsedStep: null }, { lastUsedStep: { $lt: step } }] },
      { lastUsedStep: step },
    );
    // 409, not 401: the answer may say why (a 401 never explains itself), and a used code is worthless anyway.
    if (updated === 0) throw new ConflictError('This two-factor code was already used; wait for the next one');
  }

  private async useBackupCode(row: TwoFactor, code: string): Promise<void> {
    const hashes = this.backupHashes(row);
    const index = hashes.indexOf(hashBackupCode(code));
    if (index < 0) throw new HttpError(401, INVALID);
    hashes.splice(index, 1);
    // Guarded by the sealed value read above, so one code cannot be spent by two concurrent requests.
    const updated = await this.em().nativeUpdate(TwoFactorEntity, { id: row.id, backupCodes: row.backupCodes }, { backupCodes: this.box().seal(JSON.stringify(hashes)) });
    if (updated === 0) throw new HttpError(401, 'This backup code was already used');
  }

  /** One attempt from the user's own bucket (SPEC "Limits": auth class); 429 when it is empty. */
  private async spendAttempt(userId: string): Promise<void> {
    const outcome = await this.rateLimiter.consume(`two-factor:${userId}`, 'auth');
    if (!outcome.allowed) {
      const seconds = Math.max(1, Math.ceil(outcome.resetMs / 1000));
      throw new HttpError(429, `Too many two-factor attempts; try again in ${seconds} seconds`);
    }
  }

  private async setUserFlag(userId: string, enabled: boolean): Promise<void> {
    await this.em().nativeUpdate(UserEntity, { id: userId }, { twoFactorEnabled: enabled, updatedAt: new Date() });
  }
}
