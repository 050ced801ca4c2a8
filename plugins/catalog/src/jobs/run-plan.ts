import { VersionHistory } from '../adapter-configs/version-history.js';
import { NotFoundError, type AdapterConfigSummary, type JobCatalog, type JobSummary, type NotificationBinding, type ResolvedAdapterConfig, type RunPlan, type RunPlanDestination, type StorageSummary, type TestRestoreConfig } from '@holdfast/kernel';
import { type AdapterConfigService } from '../adapter-configs/adapter-config-service.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { EncryptionProfileEntity } from '../entities/profiles.js';
import { JobDestinationEntity, JobEntity } from '../entities/jobs.js';
import { NamingTemplateEntity, NotificationTemplateEntity, RetentionPolicyEntity, SchedulePresetEntity } from '../entities/templates.js';
import { parseJsonColumn, type CatalogDeps } from '../shared/deps.js';
import { noKeyOnServer } from '../vault/vault-service.js';
import { DEFAULT_NAMING_PATTERN } from '../templates/naming-templates.js';
import { RETENTION_STRATEGY_ID } from '../templates/retention-policies.js';

/** The kernel's JobCatalog port: what the engine reads when a run starts, resolved and decrypted. */
export class CatalogJobResolver implements JobCatalog {
  constructor(
    private readonly deps: CatalogDeps,
    private readonly adapters: AdapterConfigService,
  ) {}

  async resolveRunPlan(jobId: string): Promise<RunPlan> {
    const em = this.deps.em();
    const job = await em.findOne(JobEntity, { id: jobId });
    if (!job) throw new NotFoundError('Job not found');
    const rows = await em.find(JobDestinationEntity, { jobId }, { orderBy: { priority: 'asc', id: 'asc' } });
    const destinations: RunPlanDestination[] = [];
    for (const row of rows) {
      const resolved = await this.adapters.resolve(row.configId);
      destinations.push({ ...resolved, priority: row.priority, retention: await this.retentionOf(row), transfer: row.transfer === 'direct' ? 'direct' : 'relay' });
    }
    return {
      job: {
        id: job.id,
        name: job.name,
        databases: parseJsonColumn<string[]>(job.databases, []),
        compression: job.compression as RunPlan['job']['compression'],
        pgCompression: job.pgCompression,
        compressionLevel: job.compressionLevel ?? null,
        compressionThreads: job.compressionThreads ?? null,
        archive: { format: (job.archiveFormat ?? 'PLAIN') as 'PLAIN' | 'SEEKABLE', fullEveryRuns: job.fullEveryRuns ?? null, fullEveryDays: job.fullEveryDays ?? null },
        skipVerification: job.skipVerification,
        namingPattern: await this.namingPatternOf(job.namingTemplateId ?? null),
        notificationTemplateId: job.notificationTemplateId ?? null,
        testRestore: parseJsonColumn<TestRestoreConfig | null>(job.testRestore ?? null, null),
      },
      source: await this.adapters.resolve(job.sourceId),
      destinations,
      ...(await this.encryptionOf(job.encryptionProfileId ?? null)),
    };
  }

  resolveAdapterConfig(configId: string): Promise<ResolvedAdapterConfig> {
    return this.adapters.resolve(configId);
  }

  async encryptionKey(profileId: string): Promise<Buffer> {
    const row = await this.deps.em().findOne(EncryptionProfileEntity, { id: profileId });
    if (!row) throw new NotFoundError('Encryption profile not found');
    if (row.publicKey) throw noKeyOnServer(row.name);
    return Buffer.from(this.deps.box().open(row.secretKey), 'hex');
  }

  /** The plan's encryption: the key of a symmetric profile, or the recipient of a public-key profile (issue 45). */
  private async encryptionOf(profileId: string | null): Promise<Pick<RunPlan, 'encryption' | 'publicKeyEncryption'>> {
    if (!profileId) return { encryption: null, publicKeyEncryption: null };
    const row = await this.deps.em().findOne(EncryptionProfileEntity, { id: profileId });
    if (!row) throw new NotFoundError('Encryption profile not found');
    if (row.publicKey) return { encryption: null, publicKeyEncryption: { profileId, recipient: row.publicKey } };
    return { encryption: { profileId, key: Buffer.from(this.deps.box().open(row.secretKey), 'hex') }, publicKeyEncryption: null };
  }

  async listJobs(): Promise<JobSummary[]> {
    const em = this.deps.em();
    const jobs = await em.find(JobEntity, {}, { orderBy: { id: 'asc' } });
    const presetIds = [...new Set(jobs.map((job) => job.schedulePresetId).filter((id): id is string => Boolean(id)))];
    const presets = presetIds.length === 0 ? [] : await em.find(SchedulePresetEntity, { id: { $in: presetIds } });
    const presetSchedule = new Map(presets.map((preset) => [preset.id, preset.schedule]));
    return jobs.map((job) => {
      const preset = job.schedulePresetId ? presetSchedule.get(job.schedulePresetId) : undefined;
      return {
        id: job.id,
        name: job.name,
        schedule: (preset ?? job.schedule ?? '').trim(),
        scheduleFrom: preset ? ('preset' as const) : ('job' as const),
        enabled: job.enabled,
        ...testRestoreScheduleOf(job.testRestore ?? null),
      };
    });
  }

  async listStorageDestinations(): Promise<StorageSummary[]> {
    const rows = await this.deps.em().find(AdapterConfigEntity, { type: 'storage' }, { orderBy: { id: 'asc' } });
    return rows.map((row) => ({ configId: row.id, name: row.name, adapterId: row.adapterId }));
  }

  async listAdapterConfigs(filter: { type?: AdapterConfigSummary['type']; ids?: string[]; agentIds?: string[] }): Promise<AdapterConfigSummary[]> {
    if (filter.ids?.length === 0 || filter.agentIds?.length === 0) return [];
    const where = {
      ...(filter.type ? { type: filter.type } : {}),
      ...(filter.ids ? { id: { $in: [...new Set(filter.ids)] } } : {}),
      ...(filter.agentIds ? { agentId: { $in: [...new Set(filter.agentIds)] } } : {}),
    };
    const rows = await this.deps.em().find(AdapterConfigEntity, where, { orderBy: { name: 'asc', id: 'asc' }, fields: ['id', 'name', 'type', 'adapterId', 'agentId'] });
    return rows.map((row) => ({ configId: row.id, name: row.name, type: row.type as AdapterConfigSummary['type'], adapterId: row.adapterId, agentId: row.agentId ?? null }));
  }

  async jobNames(jobIds: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(jobIds)];
    if (unique.length === 0) return new Map();
    const jobs = await this.deps.em().find(JobEntity, { id: { $in: unique } }, { fields: ['id', 'name'] });
    return new Map(jobs.map((job) => [job.id, job.name]));
  }

  /** The job's notification template, else the default template, else none; each bound channel resolved. */
  async notificationBindings(jobId: string): Promise<NotificationBinding[]> {
    const em = this.deps.em();
    const job = await em.findOne(JobEntity, { id: jobId }, { fields: ['id', 'notificationTemplateId'] });
    if (!job) return [];
    const own = job.notificationTemplateId ? await em.findOne(NotificationTemplateEntity, { id: job.notificationTemplateId }) : null;
    const template = own ?? (await em.findOne(NotificationTemplateEntity, { isDefault: true }));
    if (!template) return [];
    const stored = parseJsonColumn<Array<{ channelId: string; onSuccess?: boolean; onPartial?: boolean; onFailed?: boolean }>>(template.bindings, []);
    const bindings: NotificationBinding[] = [];
    for (const binding of stored) {
      // A channel deleted behind the template's back is skipped rather than failing every notification.
      const channel = await this.adapters.resolve(binding.channelId).catch((error: unknown) => {
        if (error instanceof NotFoundError) return null;
        throw error;
      });
      if (channel?.kind !== 'notification') continue;
      bindings.push({ channel, onSuccess: binding.onSuccess === true, onPartial: binding.onPartial === true, onFailed: binding.onFailed === true });
    }
    return bindings;
  }

  /** A source version detected by a backup or a health check, into the source's history (see VersionHistory). */
  async recordSourceVersion(configId: string, version: string, edition?: string): Promise<void> {
    await new VersionHistory(this.deps).record(configId, { version, edition });
  }

  /** Every notification configuration (by name), or the given ids that are notification configurations. */
  async notificationChannels(ids?: string[]): Promise<ResolvedAdapterConfig[]> {
    const where = ids === undefined ? { type: 'notification' } : { type: 'notification', id: { $in: [...new Set(ids)] } };
    if (ids !== undefined && ids.length === 0) return [];
    const rows = await this.deps.em().find(AdapterConfigEntity, where, { orderBy: { name: 'asc' }, fields: ['id'] });
    return Promise.all(rows.map((row) => this.adapters.resolve(row.id)));
  }

  /** The policy's config, else the legacy JSON when it holds a policy, else null (keep everything). */
  private async retentionOf(row: { retentionPolicyId?: string | null; retention: string }): Promise<RunPlanDestination['retention']> {
    if (row.retentionPolicyId) {
      const policy = await this.deps.em().findOne(RetentionPolicyEntity, { id: row.retentionPolicyId });
      if (policy) {
        return { policyId: policy.id, strategyId: RETENTION_STRATEGY_ID, config: parseJsonColumn<unknown>(policy.config, null) };
      }
    }
    const legacy = parseJsonColumn<Record<string, unknown>>(row.retention, {});
    if (legacy && typeof legacy === 'object' && Object.keys(legacy).length > 0) {
      return { policyId: null, strategyId: RETENTION_STRATEGY_ID, config: legacy };
    }
    return null;
  }

  /** The job's template, else the default template, else the built-in default pattern. */
  private async namingPatternOf(templateId: string | null): Promise<string> {
    const em = this.deps.em();
    const template = templateId ? await em.findOne(NamingTemplateEntity, { id: templateId }) : null;
    if (template) return template.pattern;
    const fallback = await em.findOne(NamingTemplateEntity, { isDefault: true });
    return fallback?.pattern ?? DEFAULT_NAMING_PATTERN;
  }
}

/** `{ testRestoreSchedule }` for jobs with a scheduled test restore, else nothing (the summary stays as it was). */
function testRestoreScheduleOf(column: string | null): { testRestoreSchedule?: string } {
  const schedule = parseJsonColumn<TestRestoreConfig | null>(column, null)?.schedule;
  return schedule ? { testRestoreSchedule: schedule.trim() } : {};
}
