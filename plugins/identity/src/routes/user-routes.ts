import { ConflictError, defineRoute, HttpError, lineText, routeResult, type AuthContext, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import type { IdentityServices } from '../services.js';
import { MIN_PASSWORD_LENGTH } from '../users/passwords.js';
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

/** `/api/users` and `/api/users/me`. */
export function userRoutes(services: IdentityServices): RouteDefinition[] {
  const { users, audit } = services;
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
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.update, resource: 'user', resourceId: user.id, details: { fields: Object.keys(request.body), self: true } });
        return userJson(user);
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
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.create, resource: 'user', resourceId: user.id, details: { email: user.email, groupId: user.groupId ?? null, isSuperAdmin: user.isSuperAdmin } });
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
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.update, resource: 'user', resourceId: user.id, details: { fields } });
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
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.delete, resource: 'user', resourceId: target.id, details: { email: target.email } });
        return undefined;
      },
    }),
  ];
}
