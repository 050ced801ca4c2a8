import { NotFoundError, ValidationError } from '@holdfast/kernel';
import type { AdapterRegistry } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { EncryptionProfileEntity } from '../entities/profiles.js';
import {
  NamingTemplateEntity,
  NotificationTemplateEntity,
  RetentionPolicyEntity,
  SchedulePresetEntity,
} from '../entities/templates.js';
import { validatePolicyConfig } from '../templates/retention-policies.js';
import type { DestinationInput, TestRestoreInput } from './job-schemas.js';
import { assertCron } from '../templates/schedule-presets.js';

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}

/** The optional references of a job that must exist when set. */
export interface JobRefs {
  sourceId: string;
  encryptionProfileId?: string | null;
  namingTemplateId?: string | null;
  schedulePresetId?: string | null;
  notificationTemplateId?: string | null;
}

/** Checks a job's references: the source is a database config, the linked records exist (404 naming the kind). */
export async function checkJobReferences(em: EntityManager, refs: JobRefs): Promise<void> {
  const source = await em.findOne(AdapterConfigEntity, { id: refs.sourceId });
  if (!source) throw new NotFoundError(`Source ${refs.sourceId} not found`);
  if (source.type !== 'database') throw invalid('body.sourceId', `must be a database configuration, "${source.name}" is ${source.type}`);
  const optional = [
    [refs.encryptionProfileId, EncryptionProfileEntity, 'Encryption profile'],
    [refs.namingTemplateId, NamingTemplateEntity, 'Naming template'],
    [refs.schedulePresetId, SchedulePresetEntity, 'Schedule preset'],
    [refs.notificationTemplateId, NotificationTemplateEntity, 'Notification template'],
  ] as const;
  for (const [id, entity, label] of optional) {
    if (id && !(await em.findOne(entity as never, { id } as never))) throw new NotFoundError(`${label} ${id} not found`);
  }
}

/** Checks destinations: distinct, existing storage configs; existing retention policies; valid legacy retention. */
export async function checkDestinations(em: EntityManager, registry: AdapterRegistry, destinations: readonly DestinationInput[]): Promise<void> {
  const seen = new Set<string>();
  for (const [index, destination] of destinations.entries()) {
    const path = `body.destinations[${index}]`;
    if (seen.has(destination.configId)) throw invalid(`${path}.configId`, 'the same destination is listed twice');
    seen.add(destination.configId);
    const config = await em.findOne(AdapterConfigEntity, { id: destination.configId });
    if (!config) throw new NotFoundError(`Destination ${destination.configId} not found`);
    if (config.type !== 'storage') throw invalid(`${path}.configId`, `must be a storage configuration, "${config.name}" is ${config.type}`);
    // A folder on the server's disk (`serverDiskOnly`): an agent uploading "directly" would write to its own disk instead.
    if (destination.transfer === 'direct' && isServerDiskOnly(registry, config.adapterId)) throw invalid(`${path}.transfer`, `"${config.name}" is a folder on the server's disk: only relay reaches it`);
    if (destination.retentionPolicyId && !(await em.findOne(RetentionPolicyEntity, { id: destination.retentionPolicyId }))) {
      throw new NotFoundError(`Retention policy ${destination.retentionPolicyId} not found`);
    }
    if (Object.keys(destination.retention).length > 0) {
      try {
        validatePolicyConfig(registry, destination.retention);
      } catch (error) {
        if (error instanceof ValidationError) throw invalid(`${path}.retention`, error.message.replace(/^Invalid request: config: /, ''));
        throw error;
      }
    }
  }
}

/**
 * A test restore target: its scratch server is a database configuration (for a redis target, of a source whose
 * scratch is a reserved index: `capabilities.scratchRestore` `index`); its schedule a valid cron.
 */
export async function checkTestRestore(em: EntityManager, registry: AdapterRegistry, testRestore: TestRestoreInput | null | undefined): Promise<void> {
  if (!testRestore) return;
  if (testRestore.schedule) assertCron(testRestore.schedule, 'body.testRestore.schedule');
  const { target } = testRestore;
  const sourceId = target.type === 'database' || target.type === 'redis' ? target.sourceId : null;
  if (!sourceId) return;
  const source = await em.findOne(AdapterConfigEntity, { id: sourceId });
  if (!source) throw new NotFoundError(`Source ${sourceId} not found`);
  if (source.type !== 'database') throw invalid('body.testRestore.target.sourceId', `must be a database configuration, "${source.name}" is ${source.type}`);
  if (target.type === 'redis' && scratchPlacementOf(registry, source.adapterId) !== 'index') {
    throw invalid('body.testRestore.target.sourceId', `must be a Redis source configuration (its scratch is a reserved index), "${source.name}" is ${source.adapterId}`);
  }
}

/** The scratch placement a source adapter declares (`capabilities.scratchRestore`); undefined for none or unknown. */
function scratchPlacementOf(registry: AdapterRegistry, adapterId: string): string | undefined {
  const capabilities = registry.get('source', adapterId)?.definition.capabilities as { scratchRestore?: string } | undefined;
  return capabilities?.scratchRestore;
}

/** Whether a storage adapter declares that only the server reaches it (`capabilities.serverDiskOnly`). */
function isServerDiskOnly(registry: AdapterRegistry, adapterId: string): boolean {
  const capabilities = registry.get('storage', adapterId)?.definition.capabilities as { serverDiskOnly?: boolean } | undefined;
  return capabilities?.serverDiskOnly === true;
}
