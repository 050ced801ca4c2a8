import { Readable } from 'node:stream';
import { defineRoute, lineText, routeResult, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorTypeOf, type AuditTrail } from '../audit/audit-trail.js';
import type { AuditLog } from '../entities/audit-log.js';
import { PERMISSION_CATALOG, PERMISSION_PRESETS, SCOPABLE_RESOURCES } from '../permissions/catalog.js';
import type { IdentityServices } from '../services.js';
import { errors } from './common.js';

const auditEntrySchema = z
  .object({
    id: z.string(),
    userId: z.string().nullable(),
    actorName: z.string().nullable().describe('User name or API key name (the email tried, for a failed sign-in)'),
    actorType: z.enum(['user', 'api-key', 'anonymous']),
    action: z.string(),
    resource: z.string(),
    resourceId: z.string().nullable(),
    resourceName: z.string().nullable().describe('Name of the resource where known (user email, key or group name)'),
    details: z.string().nullable().describe('JSON string'),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'AuditLogEntry' });

const auditFilters = z.object({
  action: lineText({ min: 1, max: 100 }).optional(),
  resource: lineText({ min: 1, max: 100 }).optional(),
  userId: lineText({ min: 1, max: 100 }).optional().describe("The acting user's id"),
  actor: lineText({ min: 1, max: 200 }).optional().describe("Part of the actor's name (user or key name, or the email tried), any case"),
  from: z.iso.datetime({ offset: true }).optional().describe('Entries at or after this time'),
  to: z.iso.datetime({ offset: true }).optional().describe('Entries at or before this time'),
});
const fromNotAfterTo = (query: { from?: string; to?: string }) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to);
const rangeIssue = { message: '`from` must not be after `to`', path: ['from'] };
const auditQuery = auditFilters
  .extend({
    page: z.coerce.number().int().min(1).default(1),
    pageSize: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine(fromNotAfterTo, rangeIssue);
const auditExportQuery = auditFilters.refine(fromNotAfterTo, rangeIssue);

const presetSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), permissions: z.array(z.string()) })
  .meta({ id: 'PermissionPreset' });

type Filters = z.infer<typeof auditFilters>;
const filtersOf = ({ from, to, action, resource, userId, actor }: Filters) => ({
  action,
  resource,
  userId,
  actor,
  from: from ? new Date(from) : undefined,
  to: to ? new Date(to) : undefined,
});

/** The CSV columns of the export, in order. */
export const AUDIT_CSV_COLUMNS = ['time', 'actor', 'actorType', 'userId', 'action', 'resource', 'resourceId', 'resourceName', 'ipAddress', 'userAgent', 'details'] as const;

/**
 * One CSV cell: quoted when it holds a comma, quote or line break; a cell starting with `=`, `+`, `-`, `@`, a tab
 * or a carriage return gets a leading `'` so a spreadsheet shows it as text instead of running it as a formula.
 */
export function csvCell(value: string | null | undefined): string {
  let text = value ?? '';
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

async function* csvLines(trail: AuditTrail, filters: Filters): AsyncGenerator<string> {
  yield `${AUDIT_CSV_COLUMNS.join(',')}\r\n`;
  for await (const batch of trail.batches(filtersOf(filters))) {
    const names = await trail.namesOf(batch);
    let chunk = '';
    for (const entry of batch) {
      const name = names.get(entry.id);
      const cells = [
        entry.createdAt.toISOString(),
        name?.actorName,
        actorTypeOf(entry),
        entry.userId,
        entry.action,
        entry.resource,
        entry.resourceId,
        name?.resourceName,
        entry.ipAddress,
        entry.userAgent,
        entry.details,
      ];
      chunk += `${cells.map((cell) => csvCell(cell ?? null)).join(',')}\r\n`;
    }
    yield chunk;
  }
}

async function entriesJson(trail: AuditTrail, entries: AuditLog[]) {
  const names = await trail.namesOf(entries);
  return entries.map((entry) => ({
    id: entry.id,
    userId: entry.userId ?? null,
    actorName: names.get(entry.id)?.actorName ?? null,
    actorType: actorTypeOf(entry),
    action: entry.action,
    resource: entry.resource,
    resourceId: entry.resourceId ?? null,
    resourceName: names.get(entry.id)?.resourceName ?? null,
    details: entry.details ?? null,
    ipAddress: entry.ipAddress ?? null,
    userAgent: entry.userAgent ?? null,
    createdAt: entry.createdAt.toISOString(),
  }));
}

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
            presets: z.array(presetSchema).describe('Named permission sets the web app offers for API keys and groups'),
          }),
        },
        ...errors(401),
      },
      handler: () => ({
        permissions: PERMISSION_CATALOG.map((entry) => ({ ...entry })),
        scopableResources: SCOPABLE_RESOURCES,
        presets: PERMISSION_PRESETS.map((preset) => ({ ...preset, permissions: [...preset.permissions] })),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/audit/export',
      summary: 'The audit log as CSV (same filters as GET /api/audit, every matching entry, newest first)',
      tags: ['audit'],
      access: { permission: 'audit:read' },
      request: { query: auditExportQuery },
      responses: {
        200: {
          description: `CSV with a header row (${AUDIT_CSV_COLUMNS.join(', ')}); cells that a spreadsheet would run as a formula start with '.`,
          contentType: 'text/csv',
          schema: z.string(),
        },
        ...errors(400, 401, 403),
      },
      handler: (request) => {
        const stamp = new Date().toISOString().slice(0, 10);
        return routeResult({
          headers: {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': `attachment; filename="holdfast-audit-${stamp}.csv"`,
            'Cache-Control': 'no-store',
          },
          stream: Readable.from(csvLines(services.audit, request.query)),
        });
      },
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
        const { page, pageSize } = request.query;
        const { entries, total } = await services.audit.list({ ...filtersOf(request.query), page, pageSize });
        return {
          entries: await entriesJson(services.audit, entries),
          total,
          page: request.query.page,
          pageSize: request.query.pageSize,
        };
      },
    }),
  ];
}
