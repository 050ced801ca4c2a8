import {
  HttpError,
  PROTECTED_ACTION_ERRORS,
  SECOND_FACTOR_HEADER,
  UnauthorizedError,
  type AuthContext,
  type ProtectedAction,
  type ProtectedActionGuard,
  type ProtectedActionProof,
  type RouteRequest,
} from '@holdfast/kernel';
import { readCookie, SESSION_COOKIE } from '../auth/session-cookie.js';
import type { Session } from '../entities/session.js';
import type { User } from '../entities/user.js';
import { actorOf } from '../routes/common.js';
import type { IdentityServices } from '../services.js';

/** Audit action of a protected action that was taken, and of one that was refused. */
export const PROTECTED_AUDIT_ACTIONS = { done: 'protected-action', refused: 'protected-action.refused' } as const;

/** What each protected action is called in messages. */
const ACTION_LABELS: Record<ProtectedAction['kind'], string> = {
  'backup.delete': 'delete a backup',
  'backup.unlock': 'unlock a backup',
  'destination.delete': 'delete a storage destination',
  'encryption-profile.delete': 'delete an encryption profile',
  'retention.change': 'change retention',
  'destination.lock-change': "change a destination's lock settings",
  'second-factor.change': 'change your second factors',
  'api-key.allow-backup-deletion': 'create an API key that may delete backups',
};

/** The second factors a user can prove: TOTP (with its backup codes) and any registered passkey. */
export async function provableFactors(services: IdentityServices, user: User): Promise<Array<'totp' | 'passkey'>> {
  const factors: Array<'totp' | 'passkey'> = [];
  if (await services.twoFactor.isEnabled(user.id)) factors.push('totp');
  if ((await services.passkeys.countFor(user.id)) > 0) factors.push('passkey');
  return factors;
}

/** The session of a cookie-authenticated request, or null. */
export async function sessionOfRequest(services: IdentityServices, request: RouteRequest): Promise<Session | null> {
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  return token ? services.sessions.findByToken(token) : null;
}

/** Whether the session's second factor was proven within the window. */
export function isFresh(session: Session | null, windowMs: number, now = Date.now()): boolean {
  const at = session?.secondFactorAt?.getTime();
  return at !== undefined && now - at <= windowMs && at <= now + 60_000;
}

function headerValue(request: RouteRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Issue 45.4. Signed-in users who have a second factor must have proven it within the window (sign-in or
 * `POST /api/auth/step-up`), or send a current TOTP code in `X-Holdfast-Second-Factor`; users without one pass
 * (recorded as `none`). API keys pass only with `allowBackupDeletion`. Refusals and completed actions are audited.
 */
export class IdentityProtectedActionGuard implements ProtectedActionGuard {
  constructor(private readonly services: IdentityServices) {}

  async authorize(request: RouteRequest, action: ProtectedAction): Promise<ProtectedActionProof> {
    const auth = request.auth;
    if (!auth) throw new UnauthorizedError();
    if (auth.authMethod === 'apikey') return this.authorizeKey(request, auth, action);
    const user = await this.services.users.get(auth.userId);
    const factors = await provableFactors(this.services, user);
    if (factors.length === 0) return { method: 'none' };
    const session = await sessionOfRequest(this.services, request);
    if (session && isFresh(session, this.services.config.stepUpWindowMs)) {
      return { method: (session.secondFactorMethod ?? 'totp') as ProtectedActionProof['method'], provenAt: session.secondFactorAt!.toISOString() };
    }
    const inlineCode = headerValue(request, SECOND_FACTOR_HEADER)?.trim();
    if (inlineCode && factors.includes('totp')) {
      await this.verifyInlineCode(request, user, action, inlineCode);
      const now = new Date();
      if (session) await this.services.sessions.markSecondFactor(session.id, 'totp', now);
      return { method: 'totp', provenAt: now.toISOString() };
    }
    await this.refuse(request, action, 'second-factor-not-fresh');
    const minutes = Math.round(this.services.config.stepUpWindowMs / 60_000);
    throw new HttpError(
      403,
      `To ${ACTION_LABELS[action.kind]} you need a fresh second factor (proven within the last ${minutes} minute${minutes === 1 ? '' : 's'}): ` +
        `confirm with your authenticator code${factors.includes('passkey') ? ' or a passkey' : ''} at POST /api/auth/step-up, then try again` +
        (factors.includes('totp') ? ` (or send the code in the ${SECOND_FACTOR_HEADER} header)` : ''),
      { code: PROTECTED_ACTION_ERRORS.secondFactorRequired, action: action.kind, stepUp: '/api/auth/step-up', methods: factors },
    );
  }

  async recordDone(request: RouteRequest, action: ProtectedAction, proof: ProtectedActionProof): Promise<void> {
    const auth = request.auth!;
    const details = { ...action.details, action: action.kind, proof: proof.method, ...(proof.provenAt ? { secondFactorAt: proof.provenAt } : {}), via: auth.authMethod, ...(auth.apiKeyId ? { apiKeyId: auth.apiKeyId } : {}) };
    await this.audit(request, PROTECTED_AUDIT_ACTIONS.done, action, details);
    void this.services.events?.emit('protected_action', {
      action: action.kind,
      resource: action.resource,
      resourceId: action.resourceId,
      actorName: auth.actorName ?? auth.userId,
      userId: auth.userId,
      via: auth.authMethod,
      proof: proof.method,
      details: action.details ?? {},
      timestamp: new Date().toISOString(),
    });
  }

  private async authorizeKey(request: RouteRequest, auth: AuthContext, action: ProtectedAction): Promise<ProtectedActionProof> {
    const key = auth.apiKeyId ? await this.services.apiKeys.getById(auth.apiKeyId).catch(() => null) : null;
    if (key?.allowBackupDeletion) return { method: 'api-key' };
    await this.refuse(request, action, 'api-key-without-option');
    throw new HttpError(
      403,
      `This API key may not ${ACTION_LABELS[action.kind]}: only a key created with "allowBackupDeletion": true may delete backups or take the other protected actions`,
      { code: PROTECTED_ACTION_ERRORS.apiKeyNotAllowed, action: action.kind, option: 'allowBackupDeletion' },
    );
  }

  private async verifyInlineCode(request: RouteRequest, user: User, action: ProtectedAction, code: string): Promise<void> {
    try {
      await this.services.twoFactor.verify(user.id, { code });
    } catch (error) {
      // A wrong code is a refusal of the action (403), not a lost session (401).
      if (error instanceof HttpError && error.status === 401) {
        await this.refuse(request, action, 'wrong-second-factor');
        throw new HttpError(403, `The code in the ${SECOND_FACTOR_HEADER} header is not correct; enter the current code of your authenticator app`, {
          code: PROTECTED_ACTION_ERRORS.secondFactorRequired,
          action: action.kind,
          stepUp: '/api/auth/step-up',
        });
      }
      throw error;
    }
  }

  private async refuse(request: RouteRequest, action: ProtectedAction, reason: string): Promise<void> {
    await this.audit(request, PROTECTED_AUDIT_ACTIONS.refused, action, { ...action.details, action: action.kind, reason, via: request.auth?.authMethod });
  }

  private async audit(request: RouteRequest, name: string, action: ProtectedAction, details: Record<string, unknown>): Promise<void> {
    try {
      await this.services.audit.record(actorOf(request), { action: name, resource: action.resource, resourceId: action.resourceId, details });
    } catch (error) {
      this.services.logger.error({ err: error, action: action.kind }, 'protected action could not be audited');
    }
  }
}
