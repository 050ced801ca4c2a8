import type { RouteRequest } from './http-contract.js';
import type { ProtectedAction, ProtectedActionGuard } from './ports/identity.js';

/**
 * Runs an action that can lose backups behind the guard (issue 45.4): refuses with a 403 unless the caller may take
 * it now, runs it, then audits it and raises `protected_action`. Without a guard (a stack with no identity plugin,
 * so no users and no keys) the action just runs: there is nobody whose second factor could be asked.
 */
export async function runProtectedAction<T>(
  guard: ProtectedActionGuard | undefined,
  request: RouteRequest,
  action: ProtectedAction,
  run: () => Promise<T>,
): Promise<T> {
  if (!guard) return run();
  const proof = await guard.authorize(request, action);
  const result = await run();
  await guard.recordDone(request, action, proof);
  return result;
}

/** Stable `details.code` values of the 403 a protected action answers. */
export const PROTECTED_ACTION_ERRORS = {
  /** A signed-in user with a second factor has not proven it recently: step up at `POST /api/auth/step-up`. */
  secondFactorRequired: 'SECOND_FACTOR_REQUIRED',
  /** An API key without the `allowBackupDeletion` option. */
  apiKeyNotAllowed: 'API_KEY_NOT_ALLOWED',
} as const;

/** The header that carries a current authenticator code on the protected request itself (scripted clients). */
export const SECOND_FACTOR_HEADER = 'x-holdfast-second-factor';
