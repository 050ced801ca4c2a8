import { defineRoute, HttpError, lineText, routeResult, type RouteDefinition, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import { clearedSessionCookie, isSecureRequest, readCookie, SESSION_COOKIE, sessionCookie } from '../auth/session-cookie.js';
import { csrfTokenFor } from '../crypto/tokens.js';
import type { User } from '../entities/user.js';
import type { IdentityServices } from '../services.js';
import { createFirstAdmin } from '../users/first-admin.js';
import { MIN_PASSWORD_LENGTH, verifyPassword } from '../users/passwords.js';
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

/** Opens a session for `user`, audits LOGIN with how they signed in, emits `user_login`, and answers with the cookie. */
export async function signIn(services: IdentityServices, request: RouteRequest, user: User, status: number, details: Record<string, unknown> = { authMethod: 'password' }) {
  const { session, token } = await services.sessions.create(user.id, request.ip, request.userAgent ?? null);
  await services.audit.record(actorOf(request, user.id), { action: AUDIT_ACTIONS.login, resource: 'session', resourceId: session.id, details });
  void services.events?.emit('user_login', { userName: user.name, email: user.email, timestamp: new Date().toISOString() });
  const secure = isSecureRequest(request as RouteRequest & { secure?: boolean }, services.config.trustProxy);
  return routeResult({
    status,
    headers: { 'Set-Cookie': sessionCookie(token, session.expiresAt, secure), 'Cache-Control': 'no-store' },
    body: { user: userJson(user), csrfToken: csrfTokenFor(token), expiresAt: session.expiresAt.toISOString() },
  });
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
        const user = await verifyPassword(services.database, request.body.email, request.body.password);
        if (!user) throw new HttpError(401, 'Invalid email or password');
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
