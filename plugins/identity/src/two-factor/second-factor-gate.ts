import type { RouteRequest } from '@holdfast/kernel';
import type { User } from '../entities/user.js';
import type { IdentityServices } from '../services.js';
import { startPendingSignIn, type SecondFactorMethod } from './pending-sign-in.js';

/** The second factors this user has turned on, in the order the sign-in page offers them. */
export async function secondFactorMethods(services: IdentityServices, user: User): Promise<SecondFactorMethod[]> {
  const methods: SecondFactorMethod[] = [];
  if (await services.twoFactor.isEnabled(user.id)) methods.push('totp', 'backup-code');
  if (user.passkeyTwoFactor && (await services.passkeys.countFor(user.id)) > 0) methods.push('passkey');
  return methods;
}

/**
 * After a correct password: when the user has a second factor, answers `{ twoFactorRequired: true }` with the
 * pending cookie instead of a session; otherwise resolves undefined and the caller signs in.
 */
export async function secondFactorGate(services: IdentityServices, request: RouteRequest, user: User) {
  const methods = await secondFactorMethods(services, user);
  if (methods.length === 0) return undefined;
  return startPendingSignIn(services.oneTimeValues, request, user, methods);
}
