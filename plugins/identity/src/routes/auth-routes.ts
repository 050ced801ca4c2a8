import { defineRoute, HttpError, lineText, routeResult, type RouteDefinition, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import type { SignInFailure } from '../audit/sign-in-failure.js';
import { clearedSessionCookie, isSecureRequest, readCookie, SESSION_COOKIE, sessionCookie } from '../auth/session-cookie.js';
import { csrfTokenFor } from '../crypto/tokens.js';
import type { User } from '../entities/user.js';
import type { IdentityServices } from '../services.js';
import { createFirstAdmin } from '../users/first-admin.js';
import { checkPassword, MIN_PASSWORD_LENGTH } from '../users/passwords.js';
import { secondFactorGate } from '../two-factor/second-factor-gate.js';
import { twoFactorRequiredSchema } from '../two-factor/pending-sign-in.js';
import { actorOf, errors, userJson, userSchema } from './common.js';
import { sessionRoutes } from './session-routes.js';

export const signedInSchema = z
  .object({ user: userSchema, csrfToken: z.string(), expiresAt: z.string() })
  .meta({ id: 'SignedIn', description: 'Send `csrfToken` as `X-CSRF-Token` on every cookie-authenticated mutation.' });

export function assertEmailLogin(services: IdentityServices): void {
  if (services.config.isEmailLoginDisabled) {
    throw new HttpError(403, 'Email and password sign-in is disabled on this server (DISABLE_EMAIL_LOGIN)');
  }
}

/** The one answer to a disabled user's sign-in, whatever the method (403: the credentials were right). */
export const DISABLED_ACCOUNT_MESSAGE = 'This account is disabled; ask an administrator to enable it';

/** Refuses a disabled user (403) before any session or second-factor step. */
export function assertEnabled(user: User): void {
  if (user.disabled) throw new HttpError(403, DISABLED_ACCOUNT_MESSAGE);
}

/** Opens a session for `user`, audits LOGIN with how they signed in, emits `user_login`, and answers with the cookie. */
export async function signIn(services: IdentityServices, request: RouteRequest, user: User, status: number, details: Record<string, unknown> = { authMethod: 'password' }) {
  assertEnabled(user);
  // A sign-in with a second factor (or a passkey alone) counts as a fresh proof for protected actions (issue 45.4).
  const secondFactor = typeof details.secondFactor === 'string' ? details.secondFactor : details.authMethod === 'passkey' ? 'passkey' : null;
  const { session, token } = await services.sessions.create(user.id, request.ip, request.userAgent ?? null, secondFactor);
  await services.audit.record(actorOf(request, user.id), { action: AUDIT_ACTIONS.login, resource: 'session', resourceId: session.id, details });
  void services.events?.emit('user_login', { userName: user.name, email: user.email, timestamp: new Date().toISOString() });
  const secure = isSecureRequest(request as RouteRequest & { secure?: boolean }, services.config.trustProxy);
  return routeResult({
    status,
    headers: { 'Set-Cookie': sessionCookie(token, session.expiresAt, secure), 'Cache-Control': 'no-store' },
    body: { user: userJson(user), csrfToken: csrfTokenFor(token), expiresAt: session.expiresAt.toISOString() },
  });
}

/**
 * Audits a {@link SignInFailure} (passkey, SSO) with the account's current email when only its id is known.
 */
export async function recordSignInFailure(services: IdentityServices, request: RouteRequest, failure: SignInFailure, extra: Record<string, string | null>): Promise<void> {
  const userId = failure.account.userId ?? null;
  let email = failure.account.email ?? '';
  if (!email && userId) email = (await services.users.find(userId).catch(() => null))?.email ?? '';
  await recordFailedSignIn(services, request, userId, email, failure.reason, extra);
}

/**
 * Audits a failed sign-in (`login.failed`: the email tried, the reason, the address; never the password, code,
 * assertion or token), within the per-hour bound of {@link AuditTrail.recordFailedSignIn}. Never fails the request.
 */
export async function recordFailedSignIn(
  services: IdentityServices,
  request: RouteRequest,
  userId: string | null,
  email: string,
  reason: string,
  extra: Record<string, string | null> = {},
): Promise<void> {
  try {
    const written = await services.audit.recordFailedSignIn({ userId, ipAddress: request.ip, userAgent: request.userAgent ?? null }, email, reason, extra);
    if (!written) services.logger.warn({ userId, ip: request.ip, reason }, 'failed sign-in not audited: hourly bound reached');
  } catch (error) {
    services.logger.error({ err: error }, 'failed sign-in could not be audited');
  }
}

/** Setup, sign-in, sign-out and the session routes. */
export function authRoutes(services: IdentityServices): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/status',
      summary: 'Whether first-run setup is needed and which sign-in methods are on',
      tags: ['auth'],
      access: { public: true },
      responses: { 200: { description: 'Sign-in status.', schema: z.object({ setupRequired: z.boolean(), emailLoginEnabled: z.boolean() }) } },
      handler: async () => ({
        setupRequired: (await services.users.count()) === 0,
        emailLoginEnabled: !services.config.isEmailLoginDisabled,
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/setup',
      summary: 'Create the first super administrator and sign in (only while no user exists)',
      tags: ['auth'],
      access: { public: true },
      rateLimit: 'auth',
      request: {
        body: z.strictObject({
          name: lineText({ min: 1, max: 200 }).trim().optional(),
          email: z.email(),
          password: z.string().min(MIN_PASSWORD_LENGTH).max(1024),
        }),
      },
      responses: { 201: { description: 'Administrator created and signed in.', schema: signedInSchema }, ...errors(400, 403, 409, 429) },
      handler: async (request) => {
        assertEmailLogin(services);
        const user = await createFirstAdmin(services.database, request.body, services.events);
        await services.audit.record(actorOf(request, user.id), { action: AUDIT_ACTIONS.create, resource: 'user', resourceId: user.id, details: { setup: true, isSuperAdmin: true } });
        return signIn(services, request, user, 201);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/sign-in',
      summary: 'Sign in with email and password; sets the session cookie',
      tags: ['auth'],
      access: { public: true },
      rateLimit: 'auth',
      request: { body: z.strictObject({ email: lineText({ min: 1, max: 320 }), password: z.string().min(1).max(1024) }) },
      responses: {
        200: { description: 'Signed in, or (two-factor on) waiting for the second factor.', schema: z.union([signedInSchema, twoFactorRequiredSchema]) },
        ...errors(400, 401, 403, 429),
      },
      handler: async (request) => {
        assertEmailLogin(services);
        const { user, target, failure } = await checkPassword(services.database, request.body.email, request.body.password);
        if (!user) {
          await recordFailedSignIn(services, request, target?.id ?? null, request.body.email, failure);
          throw new HttpError(401, 'Invalid email or password');
        }
        if (user.disabled) {
          await recordFailedSignIn(services, request, user.id, request.body.email, 'disabled');
        }
        assertEnabled(user);
        return (await secondFactorGate(services, request, user)) ?? signIn(services, request, user, 200);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/sign-out',
      summary: 'End the current session and clear the cookie',
      tags: ['auth'],
      // Public so an expired session can still clear its cookie; SameSite=Lax keeps cross-site posts cookie-less.
      access: { public: true },
      responses: { 204: { description: 'Signed out.' }, ...errors(429) },
      handler: async (request) => {
        const token = readCookie(request.headers.cookie, SESSION_COOKIE);
        const session = token ? await services.sessions.revokeByToken(token) : null;
        if (session) {
          await services.audit.record(actorOf(request, session.userId), { action: AUDIT_ACTIONS.logout, resource: 'session', resourceId: session.id });
        }
        const secure = isSecureRequest(request as RouteRequest & { secure?: boolean }, services.config.trustProxy);
        return routeResult({ status: 204, headers: { 'Set-Cookie': clearedSessionCookie(secure) } });
      },
    }),
    ...sessionRoutes(services),
  ];
}
