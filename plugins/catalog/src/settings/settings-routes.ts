import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { actorOf } from '../shared/access.js';
import { errorResponses } from '../shared/schemas.js';
import { settingsPatchBody, settingsSchema, type SettingsValues } from './setting-definitions.js';
import type { SettingsService } from './settings-service.js';

const TAGS = ['settings'];

/** `/api/settings` (the system task schedules under `/api/settings/system-tasks` are observability's). */
export function settingsRoutes(settings: SettingsService): RouteDefinition[] {
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
  ];
}
