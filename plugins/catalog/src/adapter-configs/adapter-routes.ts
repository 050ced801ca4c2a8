import { ForbiddenError, defineRoute, runProtectedAction, type RouteDefinition } from '@holdfast/kernel';
import { destinationChange, protectedActionGuard } from '../shared/protected-actions.js';
import { z } from 'zod';
import { actorOf, authOf, requirePermission, visibleIds } from '../shared/access.js';
import type { CatalogDeps } from '../shared/deps.js';
import { created, deletedSchema, errorResponses, idParams } from '../shared/schemas.js';
import type { AdapterConfigService } from './adapter-config-service.js';
import { listAdapterTypes } from './adapter-type-list.js';
import {
  adapterConfigSchema,
  adapterTypeSchema,
  createAdapterBody,
  listAdaptersQuery,
  testConnectionBody,
  testConnectionResult,
  updateAdapterBody,
} from './adapter-schemas.js';
import { ADAPTER_CONFIG_TYPES, ADAPTER_PERMISSIONS, type AdapterConfigType } from './adapter-types.js';
import { testConnection, typeOfTest } from './connection-test.js';
import { VersionHistory } from './version-history.js';

// The exact permission depends on the adapter type in the request; the route-level check needs one of them.
/** One page of `GET /api/adapters/:id/versions`. */
const versionHistoryPage = z.object({
  entries: z.array(
    z.object({
      id: z.string(),
      adapterConfigId: z.string(),
      previousVersion: z.string().nullable().describe('Null for the first detection'),
      newVersion: z.string(),
      edition: z.string().nullable(),
      detectedAt: z.string(),
    }),
  ),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

const ADAPTER_READ_PERMISSIONS = Object.values(ADAPTER_PERMISSIONS).map((p) => p.read);
const ADAPTER_WRITE_PERMISSIONS = Object.values(ADAPTER_PERMISSIONS).map((p) => p.write);

const TAGS = ['adapters'];

/**
 * `/api/adapters`: the permission depends on the adapter type (sources, destinations, notifications), so routes
 * require an identity and the handler checks the type's permission before touching the record.
 */
export function adapterRoutes(deps: CatalogDeps, service: AdapterConfigService): RouteDefinition[] {
  const { container } = deps;
  const permitted = async (auth: ReturnType<typeof authOf>, type: AdapterConfigType, verb: 'read' | 'write', id?: string) =>
    requirePermission(container, auth, ADAPTER_PERMISSIONS[type][verb], id ? { type: ADAPTER_PERMISSIONS[type].resource, id } : undefined);
  const typeOf = async (id: string) => (await service.find(id)).type as AdapterConfigType;

  return [
    defineRoute({
      method: 'GET',
      path: '/api/adapters/types',
      summary: 'Every installed source, storage and notification adapter with the JSON Schema of its config',
      tags: TAGS,
      access: {},
      responses: { 200: { description: 'Installed adapters', schema: z.array(adapterTypeSchema) }, ...errorResponses(401) },
      handler: () => listAdapterTypes(deps.registry()),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/adapters',
      summary: 'List adapter configurations the caller may read (optionally of one type)',
      tags: TAGS,
      access: { anyPermission: ADAPTER_READ_PERMISSIONS },
      request: { query: listAdaptersQuery },
      responses: { 200: { description: 'Configurations', schema: z.array(adapterConfigSchema) }, ...errorResponses(400, 401, 403) },
      handler: async (request) => {
        const auth = authOf(request);
        const wanted = request.query.type ? [request.query.type] : [...ADAPTER_CONFIG_TYPES];
        const views = [];
        let isAnyTypeVisible = false;
        for (const type of wanted) {
          const { read, resource } = ADAPTER_PERMISSIONS[type];
          const ids = await visibleIds(container, auth, read, resource);
          if (ids !== 'all' && ids.length === 0) continue;
          isAnyTypeVisible = true;
          const rows = await service.list([type]);
          views.push(...(ids === 'all' ? rows : rows.filter((row) => ids.includes(row.id))));
        }
        if (!isAnyTypeVisible) throw new ForbiddenError(wanted.map((type) => ADAPTER_PERMISSIONS[type].read).join('|'));
        return views.sort((a, b) => a.name.localeCompare(b.name));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/adapters/test-connection',
      summary: 'Test a saved configuration (id) or an unsaved one (type, adapterId, config)',
      tags: TAGS,
      access: { anyPermission: ADAPTER_WRITE_PERMISSIONS },
      request: { body: testConnectionBody },
      responses: {
        200: { description: 'Outcome of the test', schema: testConnectionResult },
        ...errorResponses(400, 401, 403, 404),
      },
      handler: async (request) => {
        await permitted(authOf(request), await typeOfTest(service, request.body), 'write', request.body.id);
        return testConnection(deps, service, request.body);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/adapters/:id',
      summary: 'One adapter configuration (secrets as secretStatus)',
      tags: TAGS,
      access: { anyPermission: ADAPTER_READ_PERMISSIONS },
      request: { params: idParams },
      responses: { 200: { description: 'Configuration', schema: adapterConfigSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => {
        const row = await service.find(request.params.id);
        await permitted(authOf(request), row.type as AdapterConfigType, 'read', row.id);
        return service.viewOf(row);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/adapters/:id/versions',
      summary: 'The engine version history of a source (SPEC DbVersionHistory), newest first',
      tags: TAGS,
      access: { anyPermission: ADAPTER_READ_PERMISSIONS },
      request: {
        params: idParams,
        query: z.object({
          limit: z.coerce.number().int().min(1).max(200).default(50).describe('Rows per page (1-200)'),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('Rows to skip'),
        }),
      },
      responses: { 200: { description: 'One page of the history', schema: versionHistoryPage }, ...errorResponses(400, 401, 403, 404) },
      handler: async (request) => {
        const row = await service.find(request.params.id);
        await permitted(authOf(request), row.type as AdapterConfigType, 'read', row.id);
        const { entries, total } = await new VersionHistory(deps).page(row.id, request.query.limit, request.query.offset);
        return { entries, total, limit: request.query.limit, offset: request.query.offset };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/adapters',
      summary: 'Create an adapter configuration',
      tags: TAGS,
      access: { anyPermission: ADAPTER_WRITE_PERMISSIONS },
      request: { body: createAdapterBody },
      responses: { 201: { description: 'Created', schema: adapterConfigSchema }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      handler: async (request) => {
        await permitted(authOf(request), request.body.type, 'write');
        return created(await service.create(request.body, actorOf(request)));
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/adapters/:id',
      summary: 'Update an adapter configuration; secrets sent empty or omitted keep their stored value',
      tags: TAGS,
      access: { anyPermission: ADAPTER_WRITE_PERMISSIONS },
      request: { params: idParams, body: updateAdapterBody },
      responses: { 200: { description: 'Updated', schema: adapterConfigSchema }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      handler: async (request) => {
        const type = await typeOf(request.params.id);
        await permitted(authOf(request), type, 'write', request.params.id);
        const update = () => service.update(request.params.id, request.body, actorOf(request));
        if (type !== 'storage') return update();
        // A destination's lock settings or default retention changing is a protected action (issue 45.4).
        const row = await service.find(request.params.id);
        const before = { config: service.plainConfig(row), defaultRetentionPolicyId: row.defaultRetentionPolicyId ?? null };
        // Compared as stored: defaults filled in, so leaving out a field that keeps its default is no change.
        const after = { config: service.configAfterUpdate(row, request.body), defaultRetentionPolicyId: request.body.defaultRetentionPolicyId };
        const action = destinationChange(request.params.id, before, after);
        return action ? runProtectedAction(protectedActionGuard(deps), request, action, update) : update();
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/adapters/:id',
      summary: 'Delete an adapter configuration (409 while jobs or notification templates use it; a storage destination needs a fresh second factor)',
      tags: TAGS,
      access: { anyPermission: ADAPTER_WRITE_PERMISSIONS },
      request: { params: idParams },
      responses: { 200: { description: 'Deleted', schema: deletedSchema }, ...errorResponses(401, 403, 404, 409) },
      handler: async (request) => {
        const type = await typeOf(request.params.id);
        await permitted(authOf(request), type, 'write', request.params.id);
        const remove = () => service.delete(request.params.id, actorOf(request));
        // Decision (issue 45.4): every storage destination counts as one that holds backups; only listing it could
        // tell, and a listing may fail or be stale.
        if (type === 'storage') await runProtectedAction(protectedActionGuard(deps), request, { kind: 'destination.delete', resource: 'adapter', resourceId: request.params.id }, remove);
        else await remove();
        return { success: true };
      },
    }),
  ];
}
