import { AdapterConfigEntity } from './adapter-config.js';
import { DbVersionHistoryEntity } from './version-history.js';
import { JobDestinationEntity, JobEntity } from './jobs.js';
import { CredentialProfileEntity, EncryptionProfileEntity, KeyCanaryEntity } from './profiles.js';
import {
  NamingTemplateEntity,
  NotificationTemplateEntity,
  RetentionPolicyEntity,
  SchedulePresetEntity,
} from './templates.js';

export * from './adapter-config.js';
export * from './jobs.js';
export * from './profiles.js';
export * from './templates.js';
export * from './version-history.js';

/** Every entity the catalog owns. Settings (`system_settings`, created by the catalog's migration) are reached through knex. */
export const catalogEntities = [
  AdapterConfigEntity,
  CredentialProfileEntity,
  EncryptionProfileEntity,
  KeyCanaryEntity,
  RetentionPolicyEntity,
  NamingTemplateEntity,
  SchedulePresetEntity,
  NotificationTemplateEntity,
  JobEntity,
  JobDestinationEntity,
  DbVersionHistoryEntity,
] as const;
