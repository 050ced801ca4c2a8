import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { JobDestinationEntity, JobEntity } from '../entities/jobs.js';
import { CredentialProfileEntity, EncryptionProfileEntity } from '../entities/profiles.js';
import {
  NamingTemplateEntity,
  NotificationTemplateEntity,
  RetentionPolicyEntity,
  SchedulePresetEntity,
} from '../entities/templates.js';
import type { Catalog } from '../catalog.js';
import { openCredentialPayload } from '../credentials/credential-store.js';
import { credentialSecretFields, type CredentialType } from '../credentials/credential-types.js';
import { parseJsonColumn } from '../shared/deps.js';
import { systemTaskSchedules } from './system-task-schedules.js';
import { profileKeyFingerprint } from '../vault/vault-service.js';
import { EXPORT_FORMAT, EXPORT_VERSION, sealExportSecrets, type ExportDocument, type ExportSecrets } from './export-format.js';

function split(plain: Record<string, unknown>, secretKeys: readonly string[]) {
  const open: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(plain)) (secretKeys.includes(key) ? secret : open)[key] = value;
  return { open, secret };
}

/**
 * Builds the export document. Secret values are included only when `profileId` names an encryption profile: they
 * are then sealed with a key derived from that profile's key. Otherwise they are left out and `secrets` says so.
 */
export async function exportCatalog(catalog: Catalog, profileId?: string): Promise<ExportDocument> {
  const em = catalog.deps.em();
  const box = catalog.deps.box();
  const secrets: ExportSecrets = { adapters: {}, credentials: {}, encryptionProfiles: {} };
  const byName = { orderBy: { name: 'asc' } } as const;

  const adapters = (await em.find(AdapterConfigEntity, {}, byName)).map((row) => {
    const { open, secret } = split(catalog.adapters.plainConfig(row), catalog.adapters.secretsOf(row));
    if (Object.keys(secret).length > 0) secrets.adapters[row.id] = secret;
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      adapterId: row.adapterId,
      config: open,
      metadata: parseJsonColumn(row.metadata, null),
      primaryCredentialId: row.primaryCredentialId ?? null,
      sshCredentialId: row.sshCredentialId ?? null,
      defaultRetentionPolicyId: row.defaultRetentionPolicyId ?? null,
      excludeFromRestore: row.excludeFromRestore,
    };
  });
  const credentials = (await em.find(CredentialProfileEntity, {}, byName)).map((row) => {
    const { open, secret } = split(openCredentialPayload(box, row), credentialSecretFields(row.type as CredentialType));
    secrets.credentials[row.id] = secret;
    return { id: row.id, name: row.name, description: row.description ?? null, type: row.type, data: open };
  });
  const encryptionProfiles = (await em.find(EncryptionProfileEntity, {}, byName)).map((row) => {
    secrets.encryptionProfiles[row.id] = box.open(row.secretKey);
    // A public-key profile's secret is empty; its recipient is public and travels in the open record.
    return { id: row.id, name: row.name, description: row.description ?? null, ...(row.publicKey ? { publicKey: row.publicKey } : {}) };
  });
  const named = <T extends { id: string; name: string; description?: string | null }>(row: T) => ({
    id: row.id,
    name: row.name,
    description: row.description ?? null,
  });
  const retentionPolicies = (await em.find(RetentionPolicyEntity, {}, byName)).map((row) => ({
    ...named(row),
    config: parseJsonColumn(row.config, {}),
    isDefault: row.isDefault,
    isSystem: row.isSystem,
  }));
  const namingTemplates = (await em.find(NamingTemplateEntity, {}, byName)).map((row) => ({
    ...named(row),
    pattern: row.pattern,
    isDefault: row.isDefault,
    isSystem: row.isSystem,
  }));
  const schedulePresets = (await em.find(SchedulePresetEntity, {}, byName)).map((row) => ({
    ...named(row),
    schedule: row.schedule,
    isSystem: row.isSystem,
  }));
  const notificationTemplates = (await em.find(NotificationTemplateEntity, {}, byName)).map((row) => ({
    ...named(row),
    isDefault: row.isDefault,
    bindings: parseJsonColumn(row.bindings, []),
  }));
  const jobs = [];
  for (const row of await em.find(JobEntity, {}, byName)) {
    const destinations = await em.find(JobDestinationEntity, { jobId: row.id }, { orderBy: { priority: 'asc', id: 'asc' } });
    jobs.push({
      id: row.id,
      name: row.name,
      schedule: row.schedule,
      enabled: row.enabled,
      databases: parseJsonColumn<string[]>(row.databases, []),
      compression: row.compression,
      pgCompression: row.pgCompression,
      // Only when set, so exports of jobs on the codec defaults stay as they were.
      ...(row.compressionLevel != null ? { compressionLevel: row.compressionLevel } : {}),
      ...(row.compressionThreads != null ? { compressionThreads: row.compressionThreads } : {}),
      ...(row.archiveFormat && row.archiveFormat !== 'PLAIN' ? { archiveFormat: row.archiveFormat } : {}),
      ...(row.fullEveryRuns != null ? { fullEveryRuns: row.fullEveryRuns } : {}),
      ...(row.fullEveryDays != null ? { fullEveryDays: row.fullEveryDays } : {}),
      notificationEvents: row.notificationEvents,
      skipVerification: row.skipVerification,
      sourceId: row.sourceId,
      encryptionProfileId: row.encryptionProfileId ?? null,
      namingTemplateId: row.namingTemplateId ?? null,
      schedulePresetId: row.schedulePresetId ?? null,
      notificationTemplateId: row.notificationTemplateId ?? null,
      // Only when set, so exports of jobs without a test restore target stay as they were.
      ...(row.testRestore ? { testRestore: parseJsonColumn<unknown>(row.testRestore, null) } : {}),
      destinations: destinations.map((d) => ({
        configId: d.configId,
        priority: d.priority,
        retention: parseJsonColumn(d.retention, {}),
        retentionPolicyId: d.retentionPolicyId ?? null,
      })),
    });
  }
  // Observability keeps the task schedules; a composition without it exports none.
  const systemTasks = ((await systemTaskSchedules(catalog)?.list()) ?? []).map((task) => ({ ...task }));

  let encryption: ExportDocument['encryption'] = null;
  let sealedSecrets: string | null = null;
  if (profileId) {
    const profile = await catalog.vault.find(profileId, em);
    const key = catalog.vault.key(profile);
    const sealed = sealExportSecrets(key, secrets);
    encryption = {
      profileId: profile.id,
      profileName: profile.name,
      keyFingerprint: profileKeyFingerprint(key),
      algorithm: 'AES-256-GCM',
      kdf: 'HKDF-SHA256',
      salt: sealed.salt,
      iv: sealed.iv,
    };
    sealedSecrets = sealed.sealed;
  }
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    secrets: encryption ? 'encrypted' : 'omitted',
    encryption,
    records: {
      adapters,
      credentials,
      encryptionProfiles,
      retentionPolicies,
      namingTemplates,
      schedulePresets,
      notificationTemplates,
      jobs,
      settings: (await catalog.settings.all()) as Record<string, unknown>,
      systemTasks,
    },
    sealedSecrets,
  };
}
