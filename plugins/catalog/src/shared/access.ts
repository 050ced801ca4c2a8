import { ForbiddenError, TOKENS, UnauthorizedError, type AuthContext, type ResourceRef, type RouteRequest } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { Actor } from './deps.js';

/** The authenticated identity of a request (routes are never public here, so it is always set). */
export function authOf(request: RouteRequest): AuthContext {
  if (!request.auth) throw new UnauthorizedError();
  return request.auth;
}

/** The audit actor of a request. */
export function actorOf(request: RouteRequest): Actor {
  return { userId: request.auth?.userId ?? null, ipAddress: request.ip, userAgent: request.userAgent ?? null };
}

/** Permission check inside a handler, for routes whose permission depends on the payload (adapter type). */
export async function isPermitted(
  container: DependencyContainer,
  auth: AuthContext,
  permission: string,
  resource?: ResourceRef,
): Promise<boolean> {
  if (container.isRegistered(TOKENS.AccessPolicy, true)) {
    return container.resolve(TOKENS.AccessPolicy).isAllowed(auth, permission, resource);
  }
  return auth.isSuperAdmin || auth.permissions.includes(permission);
}

/** Throws 403 unless the identity holds `permission`. */
export async function requirePermission(
  container: DependencyContainer,
  auth: AuthContext,
  permission: string,
  resource?: ResourceRef,
): Promise<void> {
  if (!(await isPermitted(container, auth, permission, resource))) throw new ForbiddenError(permission);
}

/** Ids of `type` the identity may see with `permission` (scoped grants); `'all'` when unrestricted. */
export async function visibleIds(
  container: DependencyContainer,
  auth: AuthContext,
  permission: string,
  type: string,
): Promise<'all' | string[]> {
  if (container.isRegistered(TOKENS.AccessPolicy, true)) {
    return container.resolve(TOKENS.AccessPolicy).visibleIds(auth, permission, type);
  }
  return auth.isSuperAdmin || auth.permissions.includes(permission) ? 'all' : [];
}
