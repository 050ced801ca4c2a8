import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { newId } from '../crypto/tokens.js';
import { VerificationEntity } from '../entities/second-factor.js';

/** How long a started sign-in may take at the identity provider. */
export const PENDING_SIGN_IN_TTL_MS = 10 * 60 * 1000;

const PREFIX = 'sso-pending:';

/** What the start of a sign-in remembers for its callback. */
export interface PendingSignIn {
  providerId: string;
  /** Local path to land on after sign-in. */
  redirectTo: string;
  /** OIDC: PKCE verifier and nonce. */
  codeVerifier?: string;
  nonce?: string;
  /** SAML: when the AuthnRequest was issued (node-saml checks the request's age against it). */
  issuedAt?: string;
}

/**
 * Server-side rows (in `verifications`) for sign-ins in flight: keyed by the OIDC `state` or the SAML request id,
 * single use, expiring after {@link PENDING_SIGN_IN_TTL_MS}. The key is also set in a browser cookie for OIDC, so a
 * callback only completes in the browser that started it (no login CSRF).
 */
export class PendingSignIns {
  constructor(private readonly em: () => EntityManager) {}

  /** A random key (43 url-safe characters). */
  static newKey(): string {
    return randomBytes(32).toString('base64url');
  }

  async save(key: string, pending: PendingSignIn, ttlMs = PENDING_SIGN_IN_TTL_MS): Promise<void> {
    // Abandoned sign-ins are cleared here, so the table stays small without a housekeeping task of its own.
    await this.deleteExpired();
    const em = this.em();
    const now = new Date();
    em.create(VerificationEntity, {
      id: newId(),
      identifier: PREFIX + key,
      value: JSON.stringify(pending),
      expiresAt: new Date(now.getTime() + ttlMs),
      createdAt: now,
      updatedAt: now,
    });
    await em.flush();
  }

  /** Removes and returns the pending sign-in; undefined when unknown, already used or expired. */
  async take(key: string): Promise<PendingSignIn | undefined> {
    const em = this.em();
    const row = await em.findOne(VerificationEntity, { identifier: PREFIX + key });
    if (!row) return undefined;
    // Delete first and count: of two concurrent callbacks with the same key only one gets it.
    const deleted = await em.nativeDelete(VerificationEntity, { id: row.id });
    if (deleted === 0 || row.expiresAt.getTime() <= Date.now()) return undefined;
    return JSON.parse(row.value) as PendingSignIn;
  }

  /** The pending sign-in without using it up; undefined when unknown or expired. */
  async peek(key: string): Promise<PendingSignIn | undefined> {
    const row = await this.em().findOne(VerificationEntity, { identifier: PREFIX + key });
    return row && row.expiresAt.getTime() > Date.now() ? (JSON.parse(row.value) as PendingSignIn) : undefined;
  }

  /** Housekeeping: drops expired rows. */
  async deleteExpired(now = new Date()): Promise<number> {
    return this.em().nativeDelete(VerificationEntity, { identifier: { $like: `${PREFIX}%` }, expiresAt: { $lte: now } });
  }
}
