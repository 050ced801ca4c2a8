import { defineRoute, lineText, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { PERMISSION_CATALOG, SCOPABLE_RESOURCES } from '../permissions/catalog.js';
import type { IdentityServices } from '../services.js';
import { errors } from './common.js';

const auditEntrySchema = z
  .object({
    id: z.string(),
    userId: z.string().nullable(),
    action: z.string(),
    resource: z.string(),
    resourceId: z.string().nullable(),
    details: z.string().nullable().describe('JSON string'),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'AuditLogEntry' });

const auditQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  action: lineText({ min: 1, max: 100 }).optional(),
  resource: lineText({ min: 1, max: 100 }).optional(),
  userId: lineText({ min: 1, max: 100 }).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});

/** `GET /api/permissions` and `GET /api/audit`. */
export function permissionAndAuditRoutes(services: IdentityServices): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/permissions',
      summary: 'The permission catalog with a description of each permission',
      tags: ['auth'],
      access: {},
      responses: {
        200: {
          description: 'Every permission and which ones can be scoped to which resource type.',
          schema: z.object({
            permissions: z.array(z.object({ name: z.string(), description: z.string() })),
            scopableResources: z.record(z.string(), z.array(z.string())),
          }),
        },
        ...errors(401),
      },
      handler: () => ({ permissions: PERMISSION_CATALOG.map((entry) => ({ ...entry })), scopableResources: SCOPABLE_RESOURCES }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/audit',
      summary: 'Audit log entries, newest first, with filters and paging',
      tags: ['audit'],
      access: { permission: 'audit:read' },
      request: { query: auditQuery },
      responses: {
        200: {
          description: 'One page of entries and the total count of the filter.',
          schema: z.object({ entries: z.array(auditEntrySchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() }),
        },
        ...errors(400, 401, 403),
      },
      handler: async (request) => {
        const { from, to, ...rest } = request.query;
        const { entries, total } = await services.audit.list({ ...rest, from: from ? new Date(from) : undefined, to: to ? new Date(to) : undefined });
        return {
          entries: entries.map((entry) => ({
            id: entry.id,
            userId: entry.userId ?? null,
            action: entry.action,
            resource: entry.resource,
            resourceId: entry.resourceId ?? null,
            details: entry.details ?? null,
            ipAddress: entry.ipAddress ?? null,
            userAgent: entry.userAgent ?? null,
            createdAt: entry.createdAt.toISOString(),
          })),
          total,
          page: request.query.page,
          pageSize: request.query.pageSize,
        };
      },
    }),
  ];
}
