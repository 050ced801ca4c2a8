import { defineRoute, HttpError, lineText, NotFoundError, routeResult, runProtectedAction, type AuthContext, type RouteDefinition } from '@holdfast/kernel';
import { IdentityProtectedActionGuard } from '../protected-actions/protected-action-guard.js';
import { z } from 'zod';
import type { ApiKeyView } from '../api-keys/types.js';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import type { IdentityServices } from '../services.js';
import { actorOf, apiKeyJson, apiKeySchema, authOf, errors, idParams, via } from './common.js';

const permissionsField = z.array(lineText({ min: 1, max: 100 })).max(200).describe('Catalog permissions (see GET /api/permissions)');
const issuedSchema = z
  .object({ apiKey: apiKeySchema, key: z.string().describe('The raw key; shown this once and never again') })
  .meta({ id: 'IssuedApiKey' });

// A key can never hold more than its creator: only super administrators may grant what they do not hold.
function assertMayGrant(auth: AuthContext, permissions: readonly string[]): void {
  if (auth.isSuperAdmin) return;
  const missing = permissions.filter((permission) => !auth.permissions.includes(permission));
  if (missing.length > 0) throw new HttpError(403, `You cannot grant permissions you do not hold: ${missing.join(', ')}`);
}

/** Loads a key the caller may manage: their own, or any for a super administrator (404 otherwise). */
async function ownedKey(services: IdentityServices, auth: AuthContext, id: string): Promise<ApiKeyView> {
  const key = await services.apiKeys.getById(id);
  if (!auth.isSuperAdmin && key.userId !== auth.userId) throw new NotFoundError('API key not found');
  return key;
}

/** `/api/api-keys`. */
export function apiKeyRoutes(services: IdentityServices): RouteDefinition[] {
  const { apiKeys, audit } = services;
  const protectedActions = new IdentityProtectedActionGuard(services);
  const record = (request: Parameters<typeof actorOf>[0], action: string, key: ApiKeyView, details: Record<string, unknown> = {}) =>
    audit.record(actorOf(request), { action, resource: 'api-key', resourceId: key.id, details: { name: key.name, ...via(request.auth), ...details } });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/api-keys',
      summary: 'List API keys: own keys, or every key (optionally one user\'s) for a super administrator',
      tags: ['api-keys'],
      access: { permission: 'api-keys:read' },
      request: { query: z.object({ userId: z.string().min(1).optional() }) },
      responses: { 200: { description: 'Keys, newest first; never the raw key or its hash.', schema: z.object({ apiKeys: z.array(apiKeySchema) }) }, ...errors(401, 403) },
      handler: async (request) => {
        const auth = authOf(request);
        if (!auth.isSuperAdmin && request.query.userId && request.query.userId !== auth.userId) {
          throw new HttpError(403, 'Only a super administrator may list the keys of another user');
        }
        const userId = auth.isSuperAdmin ? request.query.userId : auth.userId;
        return { apiKeys: (await apiKeys.list(userId)).map(apiKeyJson) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/api-keys/:id',
      summary: 'One API key',
      tags: ['api-keys'],
      access: { permission: 'api-keys:read' },
      request: { params: idParams },
      responses: { 200: { description: 'The key.', schema: apiKeySchema }, ...errors(401, 403, 404) },
      handler: async (request) => apiKeyJson(await ownedKey(services, authOf(request), request.params.id)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/api-keys',
      summary: 'Create an API key for the caller; the raw key is returned once',
      tags: ['api-keys'],
      access: { permission: 'api-keys:write' },
      request: {
        body: z.strictObject({
          name: lineText({ min: 1, max: 200 }).trim(),
          permissions: permissionsField,
          expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
          allowBackupDeletion: z
            .boolean()
            .default(false)
            .describe('Let the key delete backups and take the other protected actions (delete destinations and encryption profiles, unlock, change retention); needs a fresh second factor; default false'),
        }),
      },
      responses: { 201: { description: 'Created.', schema: issuedSchema }, ...errors(400, 401, 403) },
      handler: async (request) => {
        const auth = authOf(request);
        assertMayGrant(auth, request.body.permissions);
        const expiresAt = request.body.expiresAt ? new Date(request.body.expiresAt) : null;
        const { allowBackupDeletion } = request.body;
        const create = () => apiKeys.create(auth.userId, { name: request.body.name, permissions: request.body.permissions, expiresAt, allowBackupDeletion });
        // A key that may delete backups is as strong as a fresh second factor, so creating one needs that factor.
        const issued = allowBackupDeletion
          ? await runProtectedAction(protectedActions, request, { kind: 'api-key.allow-backup-deletion', resource: 'api-key', resourceId: null, details: { name: request.body.name } }, create)
          : await create();
        await record(request, AUDIT_ACTIONS.apiKeyCreate, issued.apiKey, { permissions: issued.apiKey.permissions, allowBackupDeletion });
        return routeResult({ status: 201, headers: { 'Cache-Control': 'no-store' }, body: { apiKey: apiKeyJson(issued.apiKey), key: issued.rawKey } });
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/api-keys/:id',
      summary: 'Enable or disable an API key',
      tags: ['api-keys'],
      access: { permission: 'api-keys:write' },
      request: { params: idParams, body: z.strictObject({ enabled: z.boolean() }) },
      responses: { 200: { description: 'Updated.', schema: apiKeySchema }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        await ownedKey(services, authOf(request), request.params.id);
        const key = await apiKeys.toggle(request.params.id, request.body.enabled);
        await record(request, AUDIT_ACTIONS.apiKeyToggle, key, { enabled: key.enabled });
        return apiKeyJson(key);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/api-keys/:id/permissions',
      summary: 'Replace the permission set of an API key',
      tags: ['api-keys'],
      access: { permission: 'api-keys:write' },
      request: { params: idParams, body: z.strictObject({ permissions: permissionsField }) },
      responses: { 200: { description: 'Updated.', schema: apiKeySchema }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        const auth = authOf(request);
        await ownedKey(services, auth, request.params.id);
        assertMayGrant(auth, request.body.permissions);
        const key = await apiKeys.updatePermissions(request.params.id, request.body.permissions);
        await record(request, AUDIT_ACTIONS.apiKeyUpdatePermissions, key, { permissions: key.permissions });
        return apiKeyJson(key);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/api-keys/:id/rotate',
      summary: 'Issue a new raw key for an API key; the old one stops working at once',
      tags: ['api-keys'],
      access: { permission: 'api-keys:write' },
      request: { params: idParams },
      responses: { 200: { description: 'Rotated.', schema: issuedSchema }, ...errors(401, 403, 404) },
      handler: async (request) => {
        await ownedKey(services, authOf(request), request.params.id);
        const issued = await apiKeys.rotate(request.params.id);
        await record(request, AUDIT_ACTIONS.apiKeyRotate, issued.apiKey);
        return routeResult({ headers: { 'Cache-Control': 'no-store' }, body: { apiKey: apiKeyJson(issued.apiKey), key: issued.rawKey } });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/api-keys/:id',
      summary: 'Delete an API key',
      tags: ['api-keys'],
      access: { permission: 'api-keys:write' },
      request: { params: idParams },
      responses: { 204: { description: 'Deleted.' }, ...errors(401, 403, 404) },
      handler: async (request) => {
        await ownedKey(services, authOf(request), request.params.id);
        const key = await apiKeys.delete(request.params.id);
        await record(request, AUDIT_ACTIONS.apiKeyDelete, key);
        return undefined;
      },
    }),
  ];
}
