import type { EntityManager } from '@mikro-orm/knex';
import { NamingTemplateEntity, RetentionPolicyEntity, SchedulePresetEntity } from '../entities/templates.js';
import { newId } from '../shared/deps.js';
import { DEFAULT_NAMING_PATTERN } from './naming-templates.js';

/** System retention policies (config JSON of the `gfs` retention adapter, see adapters/retention-gfs). */
export const SYSTEM_RETENTION_POLICIES = [
  { name: 'Keep all', description: 'Never delete backups', config: { mode: 'keep-all' } },
  { name: 'Keep last 14', description: 'Keep the 14 newest backups', config: { mode: 'keep-last', count: 14 } },
  {
    name: 'GFS 7/4/12/2',
    description: 'Newest backup of each of the last 7 days, 4 weeks, 12 months and 2 years',
    config: { mode: 'gfs', daily: 7, weekly: 4, monthly: 12, yearly: 2 },
  },
] as const;

/** System schedule presets. */
export const SYSTEM_SCHEDULE_PRESETS = [
  { name: 'Hourly', description: 'At minute 0 of every hour', schedule: '0 * * * *' },
  { name: 'Daily 02:00', description: 'Every day at 02:00', schedule: '0 2 * * *' },
  { name: 'Weekly Sunday 03:00', description: 'Every Sunday at 03:00', schedule: '0 3 * * 0' },
  { name: 'Monthly 1st 04:00', description: 'On the 1st of every month at 04:00', schedule: '0 4 1 * *' },
] as const;

/** Name of the system default naming template. */
export const DEFAULT_NAMING_TEMPLATE_NAME = 'Default';

/**
 * Creates missing system records by name; idempotent, so it runs at every start. A record a user already took the
 * name of is left alone. The default naming template only becomes the default when none is marked.
 */
export async function seedSystemRecords(em: EntityManager): Promise<number> {
  const now = new Date();
  let created = 0;
  for (const policy of SYSTEM_RETENTION_POLICIES) {
    if (await em.findOne(RetentionPolicyEntity, { name: policy.name })) continue;
    em.create(RetentionPolicyEntity, {
      id: newId(),
      name: policy.name,
      description: policy.description,
      config: JSON.stringify(policy.config),
      isDefault: false,
      isSystem: true,
      createdAt: now,
      updatedAt: now,
    });
    created++;
  }
  for (const preset of SYSTEM_SCHEDULE_PRESETS) {
    if (await em.findOne(SchedulePresetEntity, { name: preset.name })) continue;
    em.create(SchedulePresetEntity, { id: newId(), ...preset, isSystem: true, createdAt: now, updatedAt: now });
    created++;
  }
  if (!(await em.findOne(NamingTemplateEntity, { name: DEFAULT_NAMING_TEMPLATE_NAME }))) {
    const hasDefault = Boolean(await em.findOne(NamingTemplateEntity, { isDefault: true }));
    em.create(NamingTemplateEntity, {
      id: newId(),
      name: DEFAULT_NAMING_TEMPLATE_NAME,
      description: 'Job name and the date and time of the run',
      pattern: DEFAULT_NAMING_PATTERN,
      isDefault: !hasDefault,
      isSystem: true,
      createdAt: now,
      updatedAt: now,
    });
    created++;
  }
  await em.flush();
  return created;
}
