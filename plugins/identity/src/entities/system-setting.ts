import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A system setting (SPEC "SystemSetting"). Minimal version owned here until the catalog plugin takes settings over;
 * the identity plugin only reads rate-limit and audit-retention keys from it.
 */
export const SystemSettingEntity = defineEntity({
  name: 'SystemSetting',
  tableName: 'system_settings',
  properties: {
    key: p.string().primary(),
    value: p.text(),
    description: p.text().nullable(),
    updatedAt: p.datetime(),
  },
});

/** A stored setting row. */
export type SystemSetting = InferEntity<typeof SystemSettingEntity>;
