import { runProtectedAction, type RouteRequest } from '@holdfast/kernel';
import { authOf } from '../routes/common.js';
import type { IdentityServices } from '../services.js';
import { IdentityProtectedActionGuard, provableFactors, sessionOfRequest } from './protected-action-guard.js';

/**
 * Issue 45.4: a change to one's own second factors (enrolling TOTP, new backup codes, turning TOTP off, adding or
 * deleting a passkey) needs a fresh second factor while the user has one. Otherwise a stolen session (with the
 * password at most) could add its own factor, or remove the user's, and then pass every protected action.
 * A user without any factor sets up the first one freely.
 */
export async function guardFactorChange<T>(services: IdentityServices, request: RouteRequest, change: string, run: () => Promise<T>): Promise<T> {
  const user = await services.users.get(authOf(request).userId);
  if ((await provableFactors(services, user)).length === 0) return run();
  const guard = new IdentityProtectedActionGuard(services);
  return runProtectedAction(guard, request, { kind: 'second-factor.change', resource: 'user', resourceId: user.id, details: { change } }, run);
}

/** A re-authentication with a current TOTP code is itself a fresh second factor: recorded on the session. */
export async function freshFromReauthentication(services: IdentityServices, request: RouteRequest, proof: 'password' | 'totp'): Promise<void> {
  if (proof !== 'totp') return;
  const session = await sessionOfRequest(services, request);
  if (session) await services.sessions.markSecondFactor(session.id, 'totp');
}
