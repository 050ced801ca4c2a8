import {
  ForbiddenError,
  HttpError,
  TOKENS,
  UnauthorizedError,
  type AuthContext,
  type RateLimitClass,
  type RequestInfo,
  type RouteDefinition,
} from '@holdfast/kernel';
import type { Context } from 'koa';
import type { DependencyContainer } from 'tsyringe';

/** 429 carries the wait in its message; the headers are set before it is thrown. */
export class TooManyRequestsError extends HttpError {
  override readonly name = 'TooManyRequestsError';
  constructor(retryAfterSeconds: number) {
    super(429, `Too many requests, retry in ${retryAfterSeconds} seconds`);
  }
}

/** The rate-limit class a route falls in; HEAD is read-only like GET. */
export function rateLimitClassOf(route: RouteDefinition, method: string): RateLimitClass | 'none' {
  if (route.rateLimit) return route.rateLimit;
  return method === 'GET' || method === 'HEAD' ? 'api' : 'mutation';
}

/**
 * Consumes one point for the client IP (or `clientKey`) when a limiter is registered. The RateLimit-* headers go on
 * every limited response, allowed or not, so clients can pace themselves before they hit 429.
 */
export async function enforceRateLimit(ctx: Context, container: DependencyContainer, kind: RateLimitClass | 'none', clientKey: string = ctx.ip): Promise<void> {
  if (kind === 'none' || !container.isRegistered(TOKENS.RateLimiter, true)) return;
  const limiter = container.resolve(TOKENS.RateLimiter);
  const outcome = await limiter.consume(clientKey, kind);
  const resetSeconds = Math.max(0, Math.ceil(outcome.resetMs / 1000));
  ctx.set('RateLimit-Limit', String(outcome.limit));
  ctx.set('RateLimit-Remaining', String(Math.max(0, outcome.remaining)));
  ctx.set('RateLimit-Reset', String(resetSeconds));
  if (!outcome.allowed) {
    // Retry-After of 0 would invite an immediate retry storm; one second is the smallest honest wait.
    const retryAfter = Math.max(1, resetSeconds);
    ctx.set('Retry-After', String(retryAfter));
    throw new TooManyRequestsError(retryAfter);
  }
}

/**
 * Rate limit, then authenticate; except a read that carries a cookie, which is authenticated first so a signed-in
 * browser session's reads count against its user's `browser` budget instead of the IP's GET limit (several users
 * behind one proxy, or one user reloading the dashboard, no longer see 429s from the app's own reads). Requests
 * with an API key or no cookie keep the SPEC order and the per-IP limit; a cookie that is not a valid session is
 * charged to the IP before its 401.
 */
export async function limitAndAuthenticate(ctx: Context, container: DependencyContainer, route: RouteDefinition): Promise<AuthContext | null> {
  const kind = rateLimitClassOf(route, ctx.method);
  const isPublic = route.access.public === true;
  if (kind !== 'api' || isPublic || !ctx.get('Cookie')) {
    await enforceRateLimit(ctx, container, kind);
    return isPublic ? null : authenticate(ctx, container);
  }
  const auth = await authenticate(ctx, container).catch(async (error: unknown) => {
    await enforceRateLimit(ctx, container, kind);
    throw error;
  });
  if (auth.authMethod === 'session') await enforceRateLimit(ctx, container, 'browser', `user:${auth.userId}`);
  else await enforceRateLimit(ctx, container, kind);
  return auth;
}

/** The framework-neutral view of a koa request that the identity plugin authenticates. */
export function requestInfoOf(ctx: Context): RequestInfo {
  return {
    method: ctx.method,
    path: ctx.path,
    ip: ctx.ip,
    userAgent: ctx.get('User-Agent') || undefined,
    headers: ctx.headers,
    cookie: (name) => ctx.cookies.get(name, { signed: false }) ?? undefined,
  };
}

/** The one authentication step: without a registered authenticator nobody is authenticated. */
export async function authenticate(ctx: Context, container: DependencyContainer): Promise<AuthContext> {
  if (!container.isRegistered(TOKENS.Authenticator, true)) throw new UnauthorizedError('no authenticator registered');
  const auth = await container.resolve(TOKENS.Authenticator).authenticate(requestInfoOf(ctx));
  if (!auth) throw new UnauthorizedError();
  return auth;
}

/**
 * The one permission check. A registered access policy decides (it knows scoped grants); without one the SPEC rule
 * applies: super administrators, or a context holding the permission.
 */
export async function authorise(
  container: DependencyContainer,
  route: RouteDefinition,
  auth: AuthContext,
  rawParams: Record<string, string>,
): Promise<void> {
  const access = route.access;
  if (access.public === true) return;
  // Checked before any permission: a key must not manage the sign-ins of its owner, whatever it holds.
  if (access.sessionOnly === true && auth.authMethod !== 'session') throw new ForbiddenError('a browser session');
  if (!access.permission) {
    if (access.anyPermission?.length) await authoriseAny(container, auth, access.anyPermission);
    return;
  }
  const permission = access.permission;
  let isAllowed: boolean;
  if (container.isRegistered(TOKENS.AccessPolicy, true)) {
    const scopeId = access.scope ? rawParams[access.scope.param] : undefined;
    const resource = access.scope && scopeId !== undefined ? { type: access.scope.resource, id: scopeId } : undefined;
    isAllowed = await container.resolve(TOKENS.AccessPolicy).isAllowed(auth, permission, resource);
  } else {
    isAllowed = auth.isSuperAdmin || auth.permissions.includes(permission);
  }
  if (!isAllowed) throw new ForbiddenError(permission);
}

/** Coarse check of `anyPermission`: at least one of them, on no particular resource; the handler checks the exact one. */
async function authoriseAny(container: DependencyContainer, auth: AuthContext, permissions: readonly string[]): Promise<void> {
  const policy = container.isRegistered(TOKENS.AccessPolicy, true) ? container.resolve(TOKENS.AccessPolicy) : undefined;
  for (const permission of permissions) {
    const isAllowed = policy
      ? await policy.isAllowed(auth, permission)
      : auth.isSuperAdmin || auth.permissions.includes(permission);
    if (isAllowed) return;
  }
  throw new ForbiddenError(permissions.join('|'));
}
