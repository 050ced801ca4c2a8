import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A retention policy (SPEC "RetentionPolicy"); `config` is the `gfs` retention adapter's config JSON. */
export const RetentionPolicyEntity = defineEntity({
  name: 'RetentionPolicy',
  tableName: 'retention_policies',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('retention_policies_name_unique'),
    description: p.text().nullable(),
    config: p.text(),
    isDefault: p.boolean().default(false),
    isSystem: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A naming template (SPEC "NamingTemplate"). */
export const NamingTemplateEntity = defineEntity({
  name: 'NamingTemplate',
  tableName: 'naming_templates',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('naming_templates_name_unique'),
    description: p.text().nullable(),
    pattern: p.text(),
    isDefault: p.boolean().default(false),
    isSystem: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A schedule preset (SPEC "SchedulePreset"); seeded presets are `isSystem` and read-only. */
export const SchedulePresetEntity = defineEntity({
  name: 'SchedulePreset',
  tableName: 'schedule_presets',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('schedule_presets_name_unique'),
    description: p.text().nullable(),
    schedule: p.string(),
    isSystem: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A notification template: which channels get which job outcomes. `bindings` is a JSON array. */
export const NotificationTemplateEntity = defineEntity({
  name: 'NotificationTemplate',
  tableName: 'notification_templates',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('notification_templates_name_unique'),
    description: p.text().nullable(),
    isDefault: p.boolean().default(false),
    bindings: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type RetentionPolicyRow = InferEntity<typeof RetentionPolicyEntity>;
export type NamingTemplateRow = InferEntity<typeof NamingTemplateEntity>;
export type SchedulePresetRow = InferEntity<typeof SchedulePresetEntity>;
export type NotificationTemplateRow = InferEntity<typeof NotificationTemplateEntity>;
