import { defineRoute, type RouteDefinition, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import { systemTaskPatch, systemTaskSchema, systemTasksPatch, type SystemTaskDefinitions, type TaskActor } from '../tasks/task-definitions.js';

const TAGS = ['settings'];

// The error answers these routes documented when the catalog served them, so the OpenAPI document is unchanged.
const errorSchema = z.object({ error: z.string(), issues: z.unknown().optional(), details: z.unknown().optional() });
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Not authenticated',
  403: 'Missing permission or read-only record',
};
const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, { description: ERROR_DESCRIPTIONS[status] ?? 'Error', schema: errorSchema }]));

function actorOf(request: RouteRequest): TaskActor {
  return { userId: request.auth?.userId ?? null, ipAddress: request.ip, userAgent: request.userAgent ?? null };
}

/** `/api/settings/system-tasks`: the schedules of the system tasks (list, one change, several changes). */
export function systemTaskRoutes(tasks: () => SystemTaskDefinitions): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/settings/system-tasks',
      summary: 'System task schedules',
      tags: TAGS,
      access: { permission: 'settings:read' },
      responses: { 200: { description: 'Tasks', schema: z.array(systemTaskSchema) }, ...errorResponses(401, 403) },
      handler: () => tasks().views(),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/settings/system-tasks',
      summary: 'Change one system task (enabled, schedule)',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: systemTaskPatch },
      responses: { 200: { description: 'Tasks after the change', schema: z.array(systemTaskSchema) }, ...errorResponses(400, 401, 403) },
      handler: (request) => tasks().update([request.body], actorOf(request)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/settings/system-tasks',
      summary: 'Change several system tasks at once',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: systemTasksPatch },
      responses: { 200: { description: 'Tasks after the change', schema: z.array(systemTaskSchema) }, ...errorResponses(400, 401, 403) },
      handler: (request) => tasks().update(request.body.tasks, actorOf(request)),
    }),
  ];
}
