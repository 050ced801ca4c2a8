import { UnauthorizedError, type AuthContext, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import type { ApiKeyView } from '../api-keys/types.js';
import type { AuditActor } from '../audit/audit-trail.js';
import type { User } from '../entities/user.js';

/** `{ "error": "..." }`, the one error body. */
export const errorSchema = z.object({ error: z.string() }).meta({ id: 'Error' });

/** Standard error responses by status, for route declarations. */
export function errors(...statuses: number[]): Record<number, { description: string; schema: z.ZodType }> {
  const text: Record<number, string> = {
    400: 'Invalid input; the message names the fields.',
    401: 'Not signed in, or the API key is invalid, disabled or expired.',
    403: 'Missing permission, CSRF token, or the feature is disabled.',
    404: 'Not found.',
    409: 'Conflicts with the current state.',
    429: 'Rate limit exceeded.',
  };
  return Object.fromEntries(statuses.map((status) => [status, { description: text[status] ?? 'Error.', schema: errorSchema }]));
}

/** `:id` path parameter. */
export const idParams = z.object({ id: z.string().min(1).max(100) });

/** A user as the API shows it. */
export const userSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    emailVerified: z.boolean(),
    image: z.string().nullable(),
    timezone: z.string(),
    dateFormat: z.string(),
    timeFormat: z.string(),
    autoRedirectOnJobStart: z.boolean(),
    twoFactorEnabled: z.boolean().nullable(),
    passkeyTwoFactor: z.boolean().nullable(),
    isSuperAdmin: z.boolean(),
    disabled: z.boolean().describe('A disabled user cannot sign in; their sessions and API keys do not work'),
    groupId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'User' });

/** JSON form of a user row. */
export function userJson(user: User): z.infer<typeof userSchema> {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    emailVerified: user.emailVerified,
    image: user.image ?? null,
    timezone: user.timezone,
    dateFormat: user.dateFormat,
    timeFormat: user.timeFormat,
    autoRedirectOnJobStart: user.autoRedirectOnJobStart,
    twoFactorEnabled: user.twoFactorEnabled ?? null,
    passkeyTwoFactor: user.passkeyTwoFactor ?? null,
    isSuperAdmin: user.isSuperAdmin,
    disabled: user.disabled,
    groupId: user.groupId ?? null,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** An API key as the API shows it: never the hash. */
export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('First 16 characters of the key, for recognising it'),
    permissions: z.array(z.string()),
    userId: z.string(),
    expiresAt: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
    enabled: z.boolean(),
    allowBackupDeletion: z.boolean().describe('The key may delete backups and take the other protected actions; set at creation, default false'),
    createdAt: z.string(),
  })
  .meta({ id: 'ApiKey' });

/** JSON form of a key view. */
export function apiKeyJson(key: ApiKeyView): z.infer<typeof apiKeySchema> {
  return {
    ...key,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
  };
}

/** The authenticated identity of a non-public route (the http plugin guarantees one). */
export function authOf(request: RouteRequest): AuthContext {
  if (!request.auth) throw new UnauthorizedError();
  return request.auth;
}

/** Who acted, for audit entries. */
export function actorOf(request: RouteRequest, userId: string | null = request.auth?.userId ?? null): AuditActor {
  // The caller's own display name (key name for API keys); otherwise the trail looks the user up.
  const actorName = request.auth && request.auth.userId === userId ? request.auth.actorName : undefined;
  return { userId, ...(actorName ? { actorName } : {}), ipAddress: request.ip, userAgent: request.userAgent ?? null };
}

/** Audit `details` that say how the actor authenticated (and with which key). */
export function via(auth: AuthContext | null): Record<string, unknown> {
  return auth?.authMethod === 'apikey' ? { authMethod: 'apikey', apiKeyId: auth.apiKeyId } : { authMethod: 'session' };
}
