// TEST DOUBLES of the catalog's kernel ports (TOKENS.JobCatalog, TOKENS.Settings) and of identity's
// TOKENS.AuditWriter. The catalog plugin was still landing while the engine was written, so these stand in for it:
// they implement exactly the kernel port contracts in kernel/src/ports/ and nothing more.
import { NotFoundError, type AuditEntry, type AuditWriter, type JobCatalog, type JobSummary, type NotificationBinding, type ResolvedAdapterConfig, type StorageSummary, type RunPlan, type RunPlanDestination, type SettingsReader } from '@holdfast/kernel';

/** In-memory JobCatalog (test double). */
export class InMemoryJobCatalog implements JobCatalog {
  readonly plans = new Map<string, RunPlan>();
  readonly configs = new Map<string, ResolvedAdapterConfig>();
  readonly keys = new Map<string, Buffer>();

  addConfig(config: Omit<ResolvedAdapterConfig, 'credentials'>): ResolvedAdapterConfig {
    const full = { credentials: {}, ...config };
    this.configs.set(config.configId, full);
    return full;
  }

  addJob(job: Partial<RunPlan['job']> & { id: string; name: string }, sourceId: string, destinations: Array<{ configId: string; priority?: number; retention?: RunPlanDestination['retention'] }>, encryption?: { profileId: string; key: Buffer }): void {
    if (encryption) this.keys.set(encryption.profileId, encryption.key);
    this.plans.set(job.id, {
      job: { databases: [], compression: 'NONE', pgCompression: '', skipVerification: false, namingPattern: '{job_name}_yyyy-MM-dd_HH-mm-ss', notificationTemplateId: null, ...job },
      source: this.requireConfig(sourceId),
      destinations: destinations.map((d) => ({ ...this.requireConfig(d.configId), priority: d.priority ?? 0, retention: d.retention ?? null })).sort((a, b) => a.priority - b.priority),
      encryption: encryption ?? null,
    });
  }

  private requireConfig(id: string): ResolvedAdapterConfig {
    const config = this.configs.get(id);
    if (!config) throw new Error(`test setup: no config ${id}`);
    return config;
  }

  async resolveRunPlan(jobId: string): Promise<RunPlan> {
    const plan = this.plans.get(jobId);
    if (!plan) throw new NotFoundError('Job not found');
    return { ...plan };
  }

  async resolveAdapterConfig(configId: string): Promise<ResolvedAdapterConfig> {
    const config = this.configs.get(configId);
    if (!config) throw new NotFoundError('Adapter configuration not found');
    return config;
  }

  async encryptionKey(profileId: string): Promise<Buffer> {
    const key = this.keys.get(profileId);
    if (!key) throw new NotFoundError('Encryption profile not found');
    return key;
  }

  /** Notification templates are not part of the engine's suites. */
  async notificationBindings(): Promise<NotificationBinding[]> {
    return [];
  }

  async notificationChannels(ids?: string[]): Promise<ResolvedAdapterConfig[]> {
    return [...this.configs.values()].filter((config) => config.kind === 'notification' && (!ids || ids.includes(config.configId)));
  }

  async jobNames(jobIds: string[]): Promise<Map<string, string>> {
    return new Map(jobIds.filter((id) => this.plans.has(id)).map((id) => [id, this.plans.get(id)!.job.name]));
  }

  /** Jobs added here have no schedule: the scheduler leaves them alone. */
  async listJobs(): Promise<JobSummary[]> {
    return [...this.plans.values()].map(({ job }) => ({
      id: job.id,
      name: job.name,
      schedule: '',
      scheduleFrom: 'job' as const,
      enabled: true,
      ...(job.testRestore?.schedule ? { testRestoreSchedule: job.testRestore.schedule } : {}),
    }));
  }

  async listStorageDestinations(): Promise<StorageSummary[]> {
    return [...this.configs.values()].filter((c) => c.kind === 'storage').map((c) => ({ configId: c.configId, name: c.name, adapterId: c.adapterId }));
  }
}

/** Settings with the catalog's defaults, changeable by the test (test double of TOKENS.Settings). */
export class MapSettings implements SettingsReader {
  readonly values = new Map<string, unknown>([
    ['maxConcurrentJobs', 1],
    ['stuckJobTimeoutMinutes', 360],
    ['systemTimezone', 'UTC'],
    ['privacy.recordTriggerActor', true],
  ]);

  async get<T = unknown>(key: string): Promise<T> {
    return this.values.get(key) as T;
  }
}

/** Records audit entries (test double of TOKENS.AuditWriter, which identity does not register yet). */
export class RecordingAuditWriter implements AuditWriter {
  readonly entries: AuditEntry[] = [];
  async write(entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
  }
}
