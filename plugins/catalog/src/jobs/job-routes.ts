import { defineRoute, runProtectedAction, type RouteDefinition } from '@holdfast/kernel';
import { protectedActionGuard, retentionChanges } from '../shared/protected-actions.js';
import { z } from 'zod';
import { actorOf, authOf, visibleIds } from '../shared/access.js';
import type { CatalogDeps } from '../shared/deps.js';
import { created, deletedSchema, errorResponses, idParams } from '../shared/schemas.js';
import { cloneJobBody, createJobBody, jobSchema, updateJobBody } from './job-schemas.js';
import type { JobService } from './job-service.js';

const TAGS = ['jobs'];
const scope = { resource: 'job', param: 'id' };

/** `/api/jobs`: scoped grants apply (`job` resources); the list shows only the jobs the caller may read. */
export function jobRoutes(deps: CatalogDeps, service: JobService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/jobs',
      summary: 'List the jobs the caller may read',
      tags: TAGS,
      // Unscoped check: a group with jobs:read on some jobs passes, and the list shows only those.
      access: { permission: 'jobs:read' },
      responses: { 200: { description: 'Jobs', schema: z.array(jobSchema) }, ...errorResponses(401, 403) },
      handler: async (request) => service.list(await visibleIds(deps.container, authOf(request), 'jobs:read', 'job')),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/jobs/:id',
      summary: 'One job with its destinations',
      tags: TAGS,
      access: { permission: 'jobs:read', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Job', schema: jobSchema }, ...errorResponses(401, 403, 404) },
      handler: (request) => service.get(request.params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/jobs',
      summary: 'Create a job',
      tags: TAGS,
      access: { permission: 'jobs:write' },
      request: { body: createJobBody },
      responses: { 201: { description: 'Created', schema: jobSchema }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      handler: async (request) => created(await service.create(request.body, actorOf(request))),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/jobs/:id/clone',
      summary: 'Copy a job and its destinations (the copy starts disabled)',
      tags: TAGS,
      access: { permission: 'jobs:write', scope },
      request: { params: idParams, body: cloneJobBody },
      responses: { 201: { description: 'Created copy', schema: jobSchema }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      handler: async (request) => created(await service.clone(request.params.id, request.body?.name, actorOf(request))),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/jobs/:id',
      summary: 'Update a job; destinations, when sent, replace the whole list',
      tags: TAGS,
      access: { permission: 'jobs:write', scope },
      request: { params: idParams, body: updateJobBody },
      responses: { 200: { description: 'Updated; a change of a destination\'s retention needs a fresh second factor (403 otherwise)', schema: jobSchema }, ...errorResponses(400, 401, 403, 404, 409, 422) },
      handler: async (request) => {
        const update = () => service.update(request.params.id, request.body, actorOf(request));
        const changes = retentionChanges((await service.get(request.params.id)).destinations, request.body.destinations);
        if (changes.length === 0) return update();
        return runProtectedAction(protectedActionGuard(deps), request, { kind: 'retention.change', resource: 'job', resourceId: request.params.id, details: { retention: changes } }, update);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/jobs/:id',
      summary: 'Delete a job and its destinations',
      tags: TAGS,
      access: { permission: 'jobs:write', scope },
      request: { params: idParams },
      responses: { 200: { description: 'Deleted', schema: deletedSchema }, ...errorResponses(401, 403, 404) },
      handler: async (request) => {
        await service.delete(request.params.id, actorOf(request));
        return { success: true };
      },
    }),
  ];
}
