import type { Readable } from 'node:stream';

/**
 * Ports between the catalog (which owns configuration) and its consumers (identity, engine, notifications), so no
 * plugin imports another. The catalog registers implementations under the matching TOKENS.
 */

/** Reads typed system settings with their defaults (SPEC "SystemSetting"); changes apply without a restart. */
export interface SettingsReader {
  /** The current value of `key`, parsed from its stored string, or the key's default. */
  get<T = unknown>(key: string): Promise<T>;
}

/** One audit entry (SPEC "AuditLog"); the writer never throws to its caller. */
export interface AuditEntry {
  userId?: string | null;
  action: string;
  resource: string;
  resourceId?: string | null;
  details?: Record<string, unknown> | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/** Writes audit entries (registered by the identity plugin). */
export interface AuditWriter {
  write(entry: AuditEntry): Promise<void>;
}

/** A saved adapter configuration resolved for use: secrets decrypted, credential profiles attached. */
export interface ResolvedAdapterConfig {
  configId: string;
  name: string;
  /** Kernel adapter kind: `source`, `storage` or `notification`. */
  kind: 'source' | 'storage' | 'notification';
  adapterId: string;
  /** Full config including decrypted secrets; never log or return it. */
  config: Record<string, unknown>;
  /** Decrypted credential profile payloads by role (`primary`, `ssh`). */
  credentials: Record<string, Record<string, unknown>>;
  /** Stores renewed credentials (OAuth tokens) into the assigned profiles; handed on as `AdapterContext.updateCredentials`. */
  updateCredentials?(role: string, patch: Record<string, unknown>): Promise<void>;
  /** Sources only: never restore into this one (backups from it are still made). */
  excludeFromRestore?: boolean;
}

/** One destination of a run plan. */
export interface RunPlanDestination extends ResolvedAdapterConfig {
  priority: number;
  /** Retention policy config (the retention adapter's config JSON); `null` keeps everything. */
  retention: { policyId: string | null; strategyId: string; config: unknown } | null;
}

/** Everything the engine needs to run a job, resolved at the moment the run starts. */
export interface RunPlan {
  job: {
    id: string;
    name: string;
    databases: string[];
    compression: 'NONE' | 'GZIP' | 'BROTLI' | 'ZSTD';
    pgCompression: string;
    skipVerification: boolean;
    namingPattern: string;
    notificationTemplateId: string | null;
  };
  source: ResolvedAdapterConfig;
  /** Ascending priority. */
  destinations: RunPlanDestination[];
  /** Present when the job encrypts: the profile key (32 bytes). */
  encryption: { profileId: string; key: Buffer } | null;
}

/** A job as listings see it; `schedule` is the effective one (the linked preset's when one is set). */
export interface JobSummary {
  id: string;
  name: string;
  schedule: string;
  scheduleFrom: 'job' | 'preset';
  enabled: boolean;
}

/** A storage destination as listings see it. */
export interface StorageSummary {
  configId: string;
  name: string;
  adapterId: string;
}

/** Resolves saved configuration for the engine (registered by the catalog plugin). */
export interface JobCatalog {
  /** Every job with its effective schedule (scheduler, dashboard, history search). */
  listJobs(): Promise<JobSummary[]>;
  /** Every configured storage destination (storage statistics). */
  listStorageDestinations(): Promise<StorageSummary[]>;
  /** Throws `NotFoundError('Job not found')` for an unknown id. */
  resolveRunPlan(jobId: string): Promise<RunPlan>;
  resolveAdapterConfig(configId: string): Promise<ResolvedAdapterConfig>;
  /** The 32-byte key of an encryption profile (restores and downloads). */
  encryptionKey(profileId: string): Promise<Buffer>;
  /** Names of jobs, for history/polling representations. */
  jobNames(jobIds: string[]): Promise<Map<string, string>>;
  /** The channel bindings of a job's notification template (else the default template, else none). */
  notificationBindings(jobId: string): Promise<NotificationBinding[]>;
  /** Every notification channel configuration, or only the given ids (unknown ids are left out). */
  notificationChannels(ids?: string[]): Promise<ResolvedAdapterConfig[]>;
  /**
   * Records the engine version a backup of source `configId` detected (SPEC DbVersionHistory; a change raises
   * `db_version_changed`). Optional so catalogs without a version history still satisfy the port.
   */
  recordSourceVersion?(configId: string, version: string, edition?: string): Promise<void>;
}

/** One channel of a notification template and the job outcomes it receives. */
export interface NotificationBinding {
  channel: ResolvedAdapterConfig;
  onSuccess: boolean;
  onPartial: boolean;
  onFailed: boolean;
}

/** One file of an encryption profile's recovery kit. */
export interface RecoveryKitFile {
  name: string;
  content: string;
  mode?: number;
}

/** Builds the recovery kit files (standalone decrypt script, README, key file) for one profile key (engine). */
export type RecoveryKitBuilder = (options: { key: Uint8Array; profileName?: string; signal?: AbortSignal }) => Promise<RecoveryKitFile[]>;

/** Options of {@link BackupReader.open}. */
export interface BackupReadOptions {
  /** Decrypt an encrypted backup (compression is kept); ignored for unencrypted files. */
  decrypt: boolean;
  /** For a multi-database dump: stream only this database's dump (decrypted and decompressed). */
  database?: string;
  signal?: AbortSignal;
}

/** A backup opened for reading: its (decoded) bytes, the name to give them and what its sidecar says. */
export interface OpenedBackup {
  stream: Readable;
  /** File name for the download (the key's last segment, without `.enc` when decrypted). */
  fileName: string;
  /** Bytes the stream will yield, when known in advance. */
  size?: number;
  /** The parsed `.meta.json` sidecar, or `null` when the backup has none. */
  sidecar: Record<string, unknown> | null;
}

/**
 * Reads stored backups for downloads: decrypts and splits multi-database dumps without exposing codec internals
 * (registered by the engine plugin). Throws `NotFoundError` for an unknown storage, `AdapterError(NOT_FOUND)` for a
 * missing file and `ValidationError` when a decoded download needs a `database` it was not given.
 */
export interface BackupReader {
  open(storageConfigId: string, key: string, options: BackupReadOptions): Promise<OpenedBackup>;
}
