import { randomBytes } from 'node:crypto';
import { ConflictError, defineRoute, HttpError, lineText, routeResult, ValidationError, type AuthContext, type RouteDefinition, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import { readCookie, SESSION_COOKIE } from '../auth/session-cookie.js';
import type { User } from '../entities/user.js';
import type { IdentityServices } from '../services.js';
import { checkPassword, MIN_PASSWORD_LENGTH } from '../users/passwords.js';
import { assertEmailLogin } from './auth-routes.js';
import { actorOf, authOf, errors, idParams, userJson, userSchema } from './common.js';

const password = z.string().min(MIN_PASSWORD_LENGTH).max(1024);
// Bodies are strict objects like every other plugin's: an unknown key is a 400 naming it, never silently dropped.
const newUserBody = z.strictObject({
  name: lineText({ min: 1, max: 200 }).trim(),
  email: z.email(),
  password: password.optional(),
  groupId: lineText({ min: 1, max: 100 }).nullable().optional(),
  isSuperAdmin: z.boolean().optional(),
});
const userChangesBody = newUserBody.partial().extend({ emailVerified: z.boolean().optional() });
const preferencesBody = z.strictObject({
  name: lineText({ min: 1, max: 200 }).trim().optional(),
  timezone: lineText({ max: 100 }).optional().describe('IANA time zone; empty means the server default'),
  dateFormat: lineText({ min: 1, max: 50 }).optional(),
  timeFormat: lineText({ min: 1, max: 50 }).optional(),
  autoRedirectOnJobStart: z.boolean().optional(),
});

// Only super administrators may create, change or delete super administrators, so `users:write` cannot be
// turned into full control.
function assertMayTouchSuperAdmin(auth: AuthContext, isSuperAdminInvolved: boolean): void {
  if (isSuperAdminInvolved && !auth.isSuperAdmin) {
    throw new HttpError(403, 'Only a super administrator may create, change or delete super administrators');
  }
}

const changePasswordBody = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: password,
});
const enabledBody = z.strictObject({ enabled: z.boolean() });
const resetPasswordBody = z.strictObject({
  password: password.optional().describe('The new password; without it the server generates a temporary one and returns it once'),
});
const resetPasswordAnswer = z.object({
  user: userSchema,
  temporaryPassword: z.string().optional().describe('Only when no password was sent: hand it to the user; it is not shown again'),
});
const resetSecondFactorAnswer = z.object({
  user: userSchema,
  removed: z.object({ totp: z.boolean(), passkeys: z.number().int() }),
});

/** A temporary password an administrator hands over: 20 characters of base64url (120 random bits). */
function temporaryPassword(): string {
  return randomBytes(15).toString('base64url');
}

/** How an administrator names a user in messages and the audit log. */
const resourceNameOf = (user: User) => user.email;

/**
 * Loads the target of an administrator action on another user: only super administrators may act on super
 * administrators, and an action that would take away the caller's own access is a 409.
 */
async function adminTarget(services: IdentityServices, request: RouteRequest, id: string, options: { notSelf?: string } = {}): Promise<User> {
  const auth = authOf(request);
  if (options.notSelf && id === auth.userId) throw new ConflictError(options.notSelf);
  const target = await services.users.get(id);
  assertMayTouchSuperAdmin(auth, target.isSuperAdmin);
  return target;
}

/** `/api/users` and `/api/users/me`. */
export function userRoutes(services: IdentityServices): RouteDefinition[] {
  const { users, audit } = services;
  const record = (request: RouteRequest, action: string, user: User, details: Record<string, unknown> = {}) =>
    audit.record(actorOf(request), { action, resource: 'user', resourceId: user.id, resourceName: resourceNameOf(user), details });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/users/me',
      summary: 'The signed-in user',
      tags: ['users'],
      access: {},
      responses: { 200: { description: 'The caller.', schema: userSchema }, ...errors(401) },
      handler: async (request) => userJson(await users.get(authOf(request).userId)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/me',
      summary: 'Change own preferences (time zone, date and time formats, redirect on job start)',
      tags: ['users'],
      access: {},
      request: { body: preferencesBody },
      responses: { 200: { description: 'Updated caller.', schema: userSchema }, ...errors(400, 401) },
      handler: async (request) => {
        const user = await users.updatePreferences(authOf(request).userId, request.body);
        await record(request, AUDIT_ACTIONS.update, user, { fields: Object.keys(request.body), self: true });
        return userJson(user);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/me/password',
      summary: 'Change own password (needs the current one); every other session of the caller ends',
      tags: ['users'],
      // The password is the browser sign-in: a script holding an API key must not change it.
      access: { sessionOnly: true },
      rateLimit: 'auth',
      request: { body: changePasswordBody },
      responses: { 204: { description: 'Changed; other sessions ended, this one stays.' }, ...errors(400, 401, 403, 409, 429) },
      handler: async (request) => {
        assertEmailLogin(services);
        const auth = authOf(request);
        const user = await users.get(auth.userId);
        const check = await checkPassword(services.database, user.email, request.body.currentPassword);
        if (check.failure === 'no-password') throw new ConflictError('This account has no password: it signs in with single sign-on or a passkey');
        if (check.user?.id !== user.id) throw new HttpError(403, 'The current password is not correct');
        if (request.body.newPassword === request.body.currentPassword) {
          throw new ValidationError('The new password must differ from the current one', [{ path: 'newPassword', message: 'same as the current password' }]);
        }
        await users.update(user.id, { password: request.body.newPassword });
        const token = readCookie(request.headers.cookie, SESSION_COOKIE);
        const current = token ? await services.sessions.findByToken(token) : null;
        const ended = await services.sessions.revokeAllForUser(user.id, current?.id);
        await record(request, AUDIT_ACTIONS.passwordChange, user, { self: true, otherSessionsEnded: ended });
        return undefined;
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id/enabled',
      summary: 'Enable or disable a user; disabling ends their sessions and stops their API keys',
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { params: idParams, body: enabledBody },
      responses: { 200: { description: 'Updated.', schema: userSchema }, ...errors(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const target = await adminTarget(services, request, request.params.id, request.body.enabled ? {} : { notSelf: 'You cannot disable your own account' });
        const user = await users.setDisabled(target.id, !request.body.enabled);
        await record(request, request.body.enabled ? AUDIT_ACTIONS.userEnable : AUDIT_ACTIONS.userDisable, user);
        return userJson(user);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users/:id/reset-password',
      summary: "Reset a user's password: to the one sent, or to a generated temporary one returned once; their sessions end",
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { params: idParams, body: resetPasswordBody },
      responses: { 200: { description: 'Reset.', schema: resetPasswordAnswer }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        assertEmailLogin(services);
        const target = await adminTarget(services, request, request.params.id);
        const generated = request.body.password === undefined ? temporaryPassword() : undefined;
        const user = await users.resetPassword(target.id, request.body.password ?? generated!);
        await record(request, AUDIT_ACTIONS.passwordReset, user, { generated: generated !== undefined });
        return routeResult({
          headers: { 'Cache-Control': 'no-store' },
          body: { user: userJson(user), ...(generated ? { temporaryPassword: generated } : {}) },
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users/:id/reset-second-factor',
      summary: "Remove a user's second factors (authenticator app, backup codes and passkeys)",
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { params: idParams, body: z.strictObject({}) },
      responses: { 200: { description: 'Removed.', schema: resetSecondFactorAnswer }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        const target = await adminTarget(services, request, request.params.id);
        const { user, removed } = await users.resetSecondFactor(target.id);
        await record(request, AUDIT_ACTIONS.secondFactorReset, user, { removed });
        return { user: userJson(user), removed };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users',
      summary: 'List users',
      tags: ['users'],
      access: { permission: 'users:read' },
      responses: { 200: { description: 'Users.', schema: z.object({ users: z.array(userSchema) }) }, ...errors(401, 403) },
      handler: async () => ({ users: (await users.list()).map(userJson) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/:id',
      summary: 'One user',
      tags: ['users'],
      access: { permission: 'users:read' },
      request: { params: idParams },
      responses: { 200: { description: 'The user.', schema: userSchema }, ...errors(401, 403, 404) },
      handler: async (request) => userJson(await users.get(request.params.id)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users',
      summary: 'Create a user',
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { body: newUserBody },
      responses: { 201: { description: 'Created.', schema: userSchema }, ...errors(400, 401, 403, 409) },
      handler: async (request) => {
        assertMayTouchSuperAdmin(authOf(request), request.body.isSuperAdmin === true);
        // DISABLE_EMAIL_LOGIN: setting a password is a password endpoint too.
        if (request.body.password !== undefined) assertEmailLogin(services);
        const user = await users.create(request.body);
        await record(request, AUDIT_ACTIONS.create, user, { email: user.email, groupId: user.groupId ?? null, isSuperAdmin: user.isSuperAdmin });
        return routeResult({ status: 201, body: userJson(user) });
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id',
      summary: 'Change a user (name, email, password, group, super administrator flag)',
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { params: idParams, body: userChangesBody },
      responses: { 200: { description: 'Updated.', schema: userSchema }, ...errors(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const target = await users.get(request.params.id);
        assertMayTouchSuperAdmin(authOf(request), target.isSuperAdmin || request.body.isSuperAdmin === true);
        if (request.body.password !== undefined) assertEmailLogin(services);
        const user = await users.update(request.params.id, request.body);
        const fields = Object.keys(request.body).map((field) => (field === 'password' ? 'password (changed)' : field));
        await record(request, AUDIT_ACTIONS.update, user, { fields });
        return userJson(user);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/:id',
      summary: 'Delete a user with their API keys and sessions',
      tags: ['users'],
      access: { permission: 'users:write' },
      request: { params: idParams },
      responses: { 204: { description: 'Deleted.' }, ...errors(401, 403, 404, 409) },
      handler: async (request) => {
        const auth = authOf(request);
        if (request.params.id === auth.userId) throw new ConflictError('You cannot delete your own account');
        const target = await users.get(request.params.id);
        assertMayTouchSuperAdmin(auth, target.isSuperAdmin);
        await users.delete(target.id);
        await record(request, AUDIT_ACTIONS.delete, target, { email: target.email });
        return undefined;
      },
    }),
  ];
}
