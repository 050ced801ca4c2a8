import { defineRoute, lineText, routeResult, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import type { GroupView } from '../groups/group-service.js';
import type { IdentityServices } from '../services.js';
import { actorOf, errors, idParams } from './common.js';

const grantSchema = z.strictObject({
  permission: lineText({ min: 1, max: 100 }),
  resourceType: lineText({ min: 1, max: 100 }).describe('job, source, destination, notification, credential or vault'),
  resourceIds: z.array(lineText({ min: 1, max: 100 })).min(1).max(1000),
});
const groupBody = z.strictObject({
  name: lineText({ min: 1, max: 200 }).trim(),
  permissions: z.array(lineText({ min: 1, max: 100 })).max(200).describe('Permissions granted on every resource'),
  grants: z.array(grantSchema).max(200).optional().describe('Permissions limited to named resources; replaces all grants when sent'),
});
const groupSchema = z
  .object({ id: z.string(), name: z.string(), permissions: z.array(z.string()), grants: z.array(grantSchema), createdAt: z.string(), updatedAt: z.string() })
  .meta({ id: 'Group' });

function groupJson(group: GroupView): z.infer<typeof groupSchema> {
  return { ...group, createdAt: group.createdAt.toISOString(), updatedAt: group.updatedAt.toISOString() };
}

/** `/api/groups`. */
export function groupRoutes(services: IdentityServices): RouteDefinition[] {
  const { groups, audit } = services;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/groups',
      summary: 'List permission groups',
      tags: ['groups'],
      access: { permission: 'groups:read' },
      responses: { 200: { description: 'Groups.', schema: z.object({ groups: z.array(groupSchema) }) }, ...errors(401, 403) },
      handler: async () => ({ groups: (await groups.list()).map(groupJson) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/groups/:id',
      summary: 'One permission group',
      tags: ['groups'],
      access: { permission: 'groups:read' },
      request: { params: idParams },
      responses: { 200: { description: 'The group.', schema: groupSchema }, ...errors(401, 403, 404) },
      handler: async (request) => groupJson(await groups.get(request.params.id)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/groups',
      summary: 'Create a permission group',
      tags: ['groups'],
      access: { permission: 'groups:write' },
      request: { body: groupBody },
      responses: { 201: { description: 'Created.', schema: groupSchema }, ...errors(400, 401, 403, 409) },
      handler: async (request) => {
        const group = await groups.create(request.body);
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.create, resource: 'group', resourceId: group.id, details: { name: group.name, permissions: group.permissions, grants: group.grants } });
        return routeResult({ status: 201, body: groupJson(group) });
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/groups/:id',
      summary: 'Replace a permission group',
      tags: ['groups'],
      access: { permission: 'groups:write' },
      request: { params: idParams, body: groupBody },
      responses: { 200: { description: 'Updated.', schema: groupSchema }, ...errors(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const group = await groups.update(request.params.id, request.body);
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.update, resource: 'group', resourceId: group.id, details: { name: group.name, permissions: group.permissions, grants: group.grants } });
        return groupJson(group);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/groups/:id',
      summary: 'Delete a permission group that has no members',
      tags: ['groups'],
      access: { permission: 'groups:write' },
      request: { params: idParams },
      responses: { 204: { description: 'Deleted.' }, ...errors(401, 403, 404, 409) },
      handler: async (request) => {
        const group = await groups.delete(request.params.id);
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.delete, resource: 'group', resourceId: group.id, details: { name: group.name } });
        return undefined;
      },
    }),
  ];
}
