import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { actorOf } from '../shared/access.js';
import { errorResponses } from '../shared/schemas.js';
import { settingsPatchBody, settingsSchema, type SettingsValues } from './setting-definitions.js';
import type { SettingsService } from './settings-service.js';
import { systemTaskPatch, systemTaskSchema, systemTasksPatch, type SystemTaskService } from './system-tasks.js';

const TAGS = ['settings'];

/** `/api/settings` and `/api/settings/system-tasks`. */
export function settingsRoutes(settings: SettingsService, tasks: SystemTaskService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/settings',
      summary: 'Every system setting with its current value (defaults included)',
      tags: TAGS,
      access: { permission: 'settings:read' },
      responses: { 200: { description: 'Settings', schema: settingsSchema }, ...errorResponses(401, 403) },
      handler: () => settings.all(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/settings',
      summary: 'Change some settings; each key is validated, unknown keys are refused',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: settingsPatchBody },
      responses: { 200: { description: 'Settings after the change', schema: settingsSchema }, ...errorResponses(400, 401, 403, 404) },
      handler: (request) => settings.update(request.body as Partial<SettingsValues>, actorOf(request)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/settings/system-tasks',
      summary: 'System task schedules',
      tags: TAGS,
      access: { permission: 'settings:read' },
      responses: { 200: { description: 'Tasks', schema: z.array(systemTaskSchema) }, ...errorResponses(401, 403) },
      handler: () => tasks.list(),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/settings/system-tasks',
      summary: 'Change one system task (enabled, schedule)',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: systemTaskPatch },
      responses: { 200: { description: 'Tasks after the change', schema: z.array(systemTaskSchema) }, ...errorResponses(400, 401, 403) },
      handler: (request) => tasks.update([request.body], actorOf(request)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/settings/system-tasks',
      summary: 'Change several system tasks at once',
      tags: TAGS,
      access: { permission: 'settings:write' },
      request: { body: systemTasksPatch },
      responses: { 200: { description: 'Tasks after the change', schema: z.array(systemTaskSchema) }, ...errorResponses(400, 401, 403) },
      handler: (request) => tasks.update(request.body.tasks, actorOf(request)),
    }),
  ];
}
