import { ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { Catalog } from '../catalog.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { JobDestinationEntity, JobEntity } from '../entities/jobs.js';
import { CredentialProfileEntity, EncryptionProfileEntity } from '../entities/profiles.js';
import { parseProfilePublicKey } from '../vault/vault-service.js';
import {
  NamingTemplateEntity,
  NotificationTemplateEntity,
  RetentionPolicyEntity,
  SchedulePresetEntity,
} from '../entities/templates.js';
import { newId } from '../shared/deps.js';
import type { ExportSecrets } from './export-format.js';
import type { ImportKind, ImportRecords } from './import-records.js';

/** Export id to installation id, per kind. */
export type IdMaps = { [K in ImportKind]: Map<string, string> };

type RecordOf<K extends ImportKind> = ImportRecords[K][number];

/** The installation id of a reference; a dangling reference rolls the whole import back with a 400. */
function mapRef(ids: IdMaps, kind: ImportKind, id: string | null | undefined, owner: string): string | null {
  if (!id) return null;
  const mapped = ids[kind].get(id);
  if (!mapped) {
    throw new ValidationError(`Invalid request: body.document: ${owner} refers to ${kind} ${id}, which is neither in the export nor imported`);
  }
  return mapped;
}

/** Writes one planned record with its references remapped and its secrets sealed under this installation's key. */
export async function writeRecord<K extends ImportKind>(
  catalog: Catalog,
  em: EntityManager,
  kind: K,
  record: RecordOf<K>,
  ids: IdMaps,
  secrets: ExportSecrets | null,
): Promise<void> {
  const box = catalog.deps.box();
  const now = new Date();
  const id = ids[kind].get(record.id)!;
  const base = { id, name: record.name, createdAt: now, updatedAt: now };
  const description = 'description' in record ? (record.description ?? null) : null;
  switch (kind) {
    case 'credentials': {
      const r = record as RecordOf<'credentials'>;
      const data = { ...r.data, ...(secrets?.credentials[r.id] ?? {}) };
      em.create(CredentialProfileEntity, { ...base, description, type: r.type, data: box.sealJson(data) });
      break;
    }
    case 'encryptionProfiles': {
      const publicKey = (record as RecordOf<'encryptionProfiles'>).publicKey;
      em.create(EncryptionProfileEntity, { ...base, description, secretKey: box.seal(publicKey ? '' : secrets!.encryptionProfiles[record.id]!), publicKey: publicKey ? parseProfilePublicKey(publicKey) : null });
      break;
    }
    case 'retentionPolicies': {
      const r = record as RecordOf<'retentionPolicies'>;
      em.create(RetentionPolicyEntity, { ...base, description, config: JSON.stringify(r.config), isDefault: r.isDefault, isSystem: r.isSystem });
      break;
    }
    case 'namingTemplates': {
      const r = record as RecordOf<'namingTemplates'>;
      em.create(NamingTemplateEntity, { ...base, description, pattern: r.pattern, isDefault: r.isDefault, isSystem: r.isSystem });
      break;
    }
    case 'schedulePresets': {
      const r = record as RecordOf<'schedulePresets'>;
      em.create(SchedulePresetEntity, { ...base, description, schedule: r.schedule, isSystem: r.isSystem });
      break;
    }
    case 'adapters': {
      const r = record as RecordOf<'adapters'>;
      const sealed = Object.fromEntries(Object.entries(secrets?.adapters[r.id] ?? {}).map(([field, value]) => [field, box.sealJson(value)]));
      const owner = `adapter "${r.name}"`;
      em.create(AdapterConfigEntity, {
        ...base,
        type: r.type,
        adapterId: r.adapterId,
        config: JSON.stringify({ ...r.config, ...sealed }),
        metadata: r.metadata ? JSON.stringify(r.metadata) : null,
        primaryCredentialId: mapRef(ids, 'credentials', r.primaryCredentialId, owner),
        sshCredentialId: mapRef(ids, 'credentials', r.sshCredentialId, owner),
        defaultRetentionPolicyId: mapRef(ids, 'retentionPolicies', r.defaultRetentionPolicyId, owner),
        excludeFromRestore: r.excludeFromRestore,
      });
      break;
    }
    case 'notificationTemplates': {
      const r = record as RecordOf<'notificationTemplates'>;
      const bindings = r.bindings.map((b) => ({ ...b, channelId: mapRef(ids, 'adapters', b.channelId, `notification template "${r.name}"`)! }));
      em.create(NotificationTemplateEntity, { ...base, description, isDefault: r.isDefault, bindings: JSON.stringify(bindings) });
      break;
    }
    case 'jobs': {
      const r = record as RecordOf<'jobs'>;
      const owner = `job "${r.name}"`;
      em.create(JobEntity, {
        ...base,
        schedule: r.schedule,
        enabled: r.enabled,
        databases: JSON.stringify(r.databases),
        compression: r.compression,
        pgCompression: r.pgCompression,
        compressionLevel: r.compressionLevel ?? null,
        compressionThreads: r.compressionThreads ?? null,
        archiveFormat: r.archiveFormat ?? 'PLAIN',
        fullEveryRuns: r.fullEveryRuns ?? null,
        fullEveryDays: r.fullEveryDays ?? null,
        notificationEvents: r.notificationEvents,
        skipVerification: r.skipVerification,
        sourceId: mapRef(ids, 'adapters', r.sourceId, owner)!,
        encryptionProfileId: mapRef(ids, 'encryptionProfiles', r.encryptionProfileId, owner),
        namingTemplateId: mapRef(ids, 'namingTemplates', r.namingTemplateId, owner),
        schedulePresetId: mapRef(ids, 'schedulePresets', r.schedulePresetId, owner),
        notificationTemplateId: mapRef(ids, 'notificationTemplates', r.notificationTemplateId, owner),
        testRestore: r.testRestore ? JSON.stringify(testRestoreWithIds(r.testRestore, (sourceId) => mapRef(ids, 'adapters', sourceId, owner))) : null,
      });
      for (const destination of r.destinations) {
        em.create(JobDestinationEntity, {
          id: newId(),
          jobId: id,
          configId: mapRef(ids, 'adapters', destination.configId, owner)!,
          priority: destination.priority,
          retention: JSON.stringify(destination.retention),
          retentionPolicyId: mapRef(ids, 'retentionPolicies', destination.retentionPolicyId, owner),
        });
      }
      break;
    }
  }
  // Keep at most one default per kind: an imported default replaces the installation's.
  if ('isDefault' in record && record.isDefault && !('isSystem' in record && record.isSystem)) {
    const entity = { retentionPolicies: RetentionPolicyEntity, namingTemplates: NamingTemplateEntity, notificationTemplates: NotificationTemplateEntity }[
      kind as 'retentionPolicies' | 'namingTemplates' | 'notificationTemplates'
    ];
    if (entity) await em.nativeUpdate(entity as never, { isDefault: true, id: { $ne: id } } as never, { isDefault: false } as never);
  }
}

/** A test restore target with its scratch server id mapped to the imported configuration's id. */
function testRestoreWithIds<T extends { target: { type: string; sourceId?: string | null } }>(testRestore: T, mapSource: (id: string) => string | null | undefined): T {
  const sourceId = testRestore.target.sourceId;
  if (!sourceId) return testRestore;
  return { ...testRestore, target: { ...testRestore.target, sourceId: mapSource(sourceId) ?? null } };
}
