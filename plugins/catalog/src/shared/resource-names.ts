import type { ResourceNames } from '@holdfast/kernel';
import type { EntityName } from '@mikro-orm/core';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { JobEntity } from '../entities/jobs.js';
import { CredentialProfileEntity, EncryptionProfileEntity } from '../entities/profiles.js';
import { NamingTemplateEntity, NotificationTemplateEntity, RetentionPolicyEntity, SchedulePresetEntity } from '../entities/templates.js';
import type { CatalogDeps } from './deps.js';

/**
 * The catalog's audit resource strings and the records they name: the catalog's own entries (`job`, `adapter`,
 * `credential`, `vault`, the template kinds) and the engine's and storage browser's (`job`, `storage`: an adapter
 * config id).
 */
const ENTITY_OF_RESOURCE: Readonly<Record<string, EntityName<{ id: string; name: string }>>> = {
  job: JobEntity,
  adapter: AdapterConfigEntity,
  storage: AdapterConfigEntity,
  credential: CredentialProfileEntity,
  vault: EncryptionProfileEntity,
  'naming-template': NamingTemplateEntity,
  'notification-template': NotificationTemplateEntity,
  'retention-policy': RetentionPolicyEntity,
  'schedule-preset': SchedulePresetEntity,
} as never;

/** {@link ResourceNames} over the catalog's tables: one query per call, deleted records absent. */
export class CatalogResourceNames implements ResourceNames {
  constructor(private readonly deps: Pick<CatalogDeps, 'em'>) {}

  async namesOf(resource: string, ids: readonly string[]): Promise<Map<string, string>> {
    const entity = Object.hasOwn(ENTITY_OF_RESOURCE, resource) ? ENTITY_OF_RESOURCE[resource] : undefined;
    const wanted = [...new Set(ids.filter((id) => typeof id === 'string' && id !== ''))];
    if (!entity || wanted.length === 0) return new Map();
    const rows = await this.deps.em().fork().find(entity, { id: { $in: wanted } } as never, { fields: ['id', 'name'] as never });
    return new Map(rows.map((row) => [row.id, row.name]));
  }
}
