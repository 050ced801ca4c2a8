import { ForbiddenError, defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { authOf, visibleIds } from '../shared/access.js';
import type { CatalogDeps } from '../shared/deps.js';
import { errorResponses } from '../shared/schemas.js';
import type { AdapterConfigService } from './adapter-config-service.js';

const browsableDestination = z.object({ id: z.string(), name: z.string(), adapterId: z.string() }).meta({ id: 'BrowsableDestination' });

/**
 * `GET /api/storage`: the destinations whose files the caller may browse (`storage:read`, scoped grants narrow it).
 * Names only, never the configuration: browsing backups must not need `destinations:read`, which shows how a
 * destination is reached (issue 47: the storage page was refused to a user holding only `storage:read`).
 */
export function browsableDestinationsRoute(deps: CatalogDeps, service: AdapterConfigService): RouteDefinition {
  return defineRoute({
    method: 'GET',
    path: '/api/storage',
    summary: 'Destinations whose backups the caller may browse (id and name only)',
    tags: ['storage'],
    access: { permission: 'storage:read' },
    responses: { 200: { description: 'Destinations, by name', schema: z.array(browsableDestination) }, ...errorResponses(401, 403) },
    handler: async (request) => {
      const ids = await visibleIds(deps.container, authOf(request), 'storage:read', 'destination');
      if (ids !== 'all' && ids.length === 0) throw new ForbiddenError('storage:read');
      const rows = await service.list(['storage']);
      return rows.filter((row) => ids === 'all' || ids.includes(row.id)).map((row) => ({ id: row.id, name: row.name, adapterId: row.adapterId }));
    },
  });
}
