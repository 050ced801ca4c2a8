import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import { readCookie, SESSION_COOKIE } from '../auth/session-cookie.js';
import { sha256Hex } from '../crypto/scrypt-hash.js';
import { csrfTokenFor } from '../crypto/tokens.js';
import type { IdentityServices } from '../services.js';
import { actorOf, authOf, errors, idParams, userJson, userSchema } from './common.js';

const sessionSchema = z
  .object({
    id: z.string(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
    isCurrent: z.boolean(),
  })
  .meta({ id: 'Session' });

/** The current identity and the caller's own sessions. */
export function sessionRoutes(services: IdentityServices): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/session',
      summary: 'The current identity; for cookie sessions also the CSRF token',
      tags: ['auth'],
      access: {},
      responses: {
        200: {
          description: 'Current identity.',
          schema: z.object({
            user: userSchema,
            permissions: z.array(z.string()),
            isSuperAdmin: z.boolean(),
            grants: z
              .array(z.object({ permission: z.string(), resourceType: z.string(), resourceIds: z.array(z.string()) }))
              .describe("Scoped grants of the caller's group (sessions only; API keys carry none): with `permissions`, what the web app shows"),
            authMethod: z.enum(['session', 'apikey']),
            apiKeyId: z.string().optional(),
            csrfToken: z.string().optional(),
          }),
        },
        ...errors(401),
      },
      handler: async (request) => {
        const auth = authOf(request);
        const user = await services.users.get(auth.userId);
        const token = auth.authMethod === 'session' ? readCookie(request.headers.cookie, SESSION_COOKIE) : undefined;
        // The one source of truth for what screens show: the access policy lets scoped grants through for sessions only.
        const grants = auth.authMethod === 'session' && !auth.isSuperAdmin && user.groupId ? (await services.groups.accessOf(user.groupId)).grants : [];
        return {
          user: userJson(user),
          permissions: auth.permissions,
          isSuperAdmin: auth.isSuperAdmin,
          grants,
          authMethod: auth.authMethod,
          ...(auth.apiKeyId ? { apiKeyId: auth.apiKeyId } : {}),
          ...(token ? { csrfToken: csrfTokenFor(token) } : {}),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sessions',
      summary: "List the caller's own live sessions",
      tags: ['auth'],
      access: { sessionOnly: true },
      responses: { 200: { description: 'Own sessions, newest first.', schema: z.object({ sessions: z.array(sessionSchema) }) }, ...errors(401, 403) },
      handler: async (request) => {
        const auth = authOf(request);
        const token = readCookie(request.headers.cookie, SESSION_COOKIE);
        const currentHash = token ? sha256Hex(token) : undefined;
        const sessions = await services.sessions.listForUser(auth.userId);
        return {
          sessions: sessions.map((session) => ({
            id: session.id,
            ipAddress: session.ipAddress ?? null,
            userAgent: session.userAgent ?? null,
            createdAt: session.createdAt.toISOString(),
            expiresAt: session.expiresAt.toISOString(),
            isCurrent: session.tokenHash === currentHash,
          })),
        };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/auth/sessions/:id',
      summary: "Revoke one of the caller's own sessions",
      tags: ['auth'],
      access: { sessionOnly: true },
      request: { params: idParams },
      responses: { 204: { description: 'Revoked.' }, ...errors(401, 403, 404) },
      handler: async (request) => {
        const auth = authOf(request);
        await services.sessions.revokeOwn(auth.userId, request.params.id);
        await services.audit.record(actorOf(request), { action: AUDIT_ACTIONS.delete, resource: 'session', resourceId: request.params.id });
        return undefined;
      },
    }),
  ];
}
