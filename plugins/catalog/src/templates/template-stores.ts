import type { RouteDefinition } from '@holdfast/kernel';
import type { CatalogDeps } from '../shared/deps.js';
import { protectedActionGuard, sameRetention } from '../shared/protected-actions.js';
import {
  createNamingTemplateBody,
  namingTemplateKind,
  namingTemplateSchema,
  updateNamingTemplateBody,
} from './naming-templates.js';
import {
  createNotificationTemplateBody,
  notificationTemplateKind,
  notificationTemplateSchema,
  updateNotificationTemplateBody,
} from './notification-templates.js';
import {
  createRetentionPolicyBody,
  retentionPolicyKind,
  retentionPolicySchema,
  updateRetentionPolicyBody,
} from './retention-policies.js';
import {
  createSchedulePresetBody,
  schedulePresetKind,
  schedulePresetSchema,
  updateSchedulePresetBody,
} from './schedule-presets.js';
import { templateRoutes } from './template-routes.js';
import { TemplateStore } from './template-store.js';

/** The four template-like record kinds and their routes. */
export class TemplateStores {
  readonly retentionPolicies;
  readonly namingTemplates;
  readonly schedulePresets;
  readonly notificationTemplates;

  constructor(private readonly deps: CatalogDeps) {
    this.retentionPolicies = new TemplateStore(deps, retentionPolicyKind(deps.registry));
    this.namingTemplates = new TemplateStore(deps, namingTemplateKind(deps.container, deps.registry));
    this.schedulePresets = new TemplateStore(deps, schedulePresetKind());
    this.notificationTemplates = new TemplateStore(deps, notificationTemplateKind());
  }

  routes(): RouteDefinition[] {
    return [
      ...templateRoutes({
        path: '/api/retention-policies',
        noun: 'retention policy',
        tag: 'templates',
        read: 'templates:read',
        write: 'templates:write',
        store: this.retentionPolicies,
        createBody: createRetentionPolicyBody,
        updateBody: updateRetentionPolicyBody,
        viewSchema: retentionPolicySchema,
        fieldKeys: ['config'],
        // Decision (issue 45.4): any change of a policy's rules counts as lowering retention (raised or lowered alike).
        protectedUpdate: {
          actionOf: (id, before, body) =>
            body.config !== undefined && !sameRetention((before as { config?: unknown }).config, body.config)
              ? { kind: 'retention.change', resource: 'retention-policy', resourceId: id, details: { name: (before as { name?: string }).name, before: (before as { config?: unknown }).config, after: body.config } }
              : null,
          guard: () => protectedActionGuard(this.deps),
        },
      }),
      ...templateRoutes({
        path: '/api/naming-templates',
        noun: 'naming template',
        tag: 'templates',
        read: 'templates:read',
        write: 'templates:write',
        store: this.namingTemplates,
        createBody: createNamingTemplateBody,
        updateBody: updateNamingTemplateBody,
        viewSchema: namingTemplateSchema,
        fieldKeys: ['pattern'],
      }),
      ...templateRoutes({
        path: '/api/schedule-presets',
        noun: 'schedule preset',
        tag: 'templates',
        read: 'templates:read',
        write: 'templates:write',
        store: this.schedulePresets,
        createBody: createSchedulePresetBody,
        updateBody: updateSchedulePresetBody,
        viewSchema: schedulePresetSchema,
        fieldKeys: ['schedule'],
      }),
      ...templateRoutes({
        path: '/api/notification-templates',
        noun: 'notification template',
        tag: 'notifications',
        read: 'notifications:read',
        write: 'notifications:write',
        store: this.notificationTemplates,
        createBody: createNotificationTemplateBody,
        updateBody: updateNotificationTemplateBody,
        viewSchema: notificationTemplateSchema,
        fieldKeys: ['bindings'],
      }),
    ];
  }
}
