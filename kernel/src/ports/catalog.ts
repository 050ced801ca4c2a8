/**
 * Ports the catalog plugin implements (it owns configuration, settings and the system key), registered under the
 * matching TOKENS so identity, the engine, notifications and observability never import it.
 */

import type { InjectionToken } from 'tsyringe';
import type { CompressionCodec } from '../compression.js';

/** Reads typed system settings with their defaults (SPEC "SystemSetting"); changes apply without a restart. */
export interface SettingsReader {
  /** The current value of `key`, parsed from its stored string, or the key's default. */
  get<T = unknown>(key: string): Promise<T>;
}

/**
 * Seals and opens secrets with the system encryption key (SPEC "Authentication" 13). Registered by the catalog,
 * which owns the key, so other plugins (identity: TOTP secrets, SSO client secrets) never load it themselves.
 * `open` throws when the value was sealed under another key or was altered.
 */
export interface SecretSealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/**
 * A plugin that stores values sealed with the system key ({@link SecretSealer}) outside the catalog's own tables
 * registers one of these, so `holdfast secrets rotate-key` re-seals them in the same transaction as the catalog's.
 * `Transaction` is the open transaction of the database port (a MikroORM EntityManager on the server; the kernel
 * knows no ORM, hence the parameter).
 */
export interface SealedSecretHolder<Transaction = unknown> {
  /** What the values are, for the rotation report: `two-factor and single sign-on secrets`. */
  readonly label: string;
  /** Replaces every sealed value the plugin stores by `reseal(value)` inside `transaction`; answers how many. */
  reseal(transaction: Transaction, reseal: (sealed: string) => string): Promise<number>;
}

/** Multi-registration token: resolve with `container.resolveAll` (registered by identity, for example). */
export const SEALED_SECRET_HOLDERS = Symbol.for('holdfast:sealed-secret-holders') as InjectionToken<SealedSecretHolder>;

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
  /** Sources only: the remote agent that runs this source (issue 48); null or absent runs it on the server. */
  agentId?: string | null;
}

/** One destination of a run plan. */
export interface RunPlanDestination extends ResolvedAdapterConfig {
  priority: number;
  /** Retention policy config (the retention adapter's config JSON); `null` keeps everything. */
  retention: { policyId: string | null; strategyId: string; config: unknown } | null;
  /** For a source bound to an agent: `direct` uploads from the agent, `relay` (the default) through the server. */
  transfer?: 'relay' | 'direct';
}

/** Everything the engine needs to run a job, resolved at the moment the run starts. */
export interface RunPlan {
  job: {
    id: string;
    name: string;
    databases: string[];
    compression: CompressionCodec;
    pgCompression: string;
    /** Level of the codec; null or absent: the codec's default (docs/formats/compression.md). */
    compressionLevel?: number | null;
    /** ZSTD frames compressed at once; null or absent: the engine's default. */
    compressionThreads?: number | null;
    /** Backup format and incremental chain limits (issue 20); absent: a plain backup, every run full. */
    archive?: { format: 'PLAIN' | 'SEEKABLE'; fullEveryRuns: number | null; fullEveryDays: number | null };
    skipVerification: boolean;
    namingPattern: string;
    notificationTemplateId: string | null;
    /** Where scheduled and on-demand test restores go; absent or null: the job has none. */
    testRestore?: TestRestoreConfig | null;
  };
  source: ResolvedAdapterConfig;
  /** Ascending priority. */
  destinations: RunPlanDestination[];
  /** Present when the job encrypts with a symmetric profile: the profile key (32 bytes). */
  encryption: { profileId: string; key: Buffer } | null;
  /**
   * Present when the job encrypts with a public-key profile (issue 45): the `age1...` X25519 recipient. Backups are
   * written in the age format; the server holds no key that opens them. Never set together with `encryption`.
   */
  publicKeyEncryption?: { profileId: string; recipient: string } | null;
}

/**
 * A job's scratch target for test restores: the latest backup is restored there, checked and dropped.
 * `database`: a throwaway database on the server of source configuration `sourceId` (default: the job's source);
 * `directory`: a throwaway folder below `path`; `redis`: database index `database` (reserved for test restores: it
 * must be empty and is flushed afterwards) on the Redis server of `sourceId` (default: the job's source); `sqlite`: a
 * throwaway database file in a folder created below `path`. `schedule` is a 5-part cron (null: on demand only).
 * A job whose source is set up for point-in-time recovery always gets a point-in-time test restore to a random instant
 * of the recoverable window: PostgreSQL takes a `directory` target, below whose `path` the restored cluster is served
 * on a free local port and checked (docs/pitr.md, "Test restores"); MySQL/MariaDB takes a `database` target, on whose
 * server (default: the job's own, which is then written) each database of the base is rebuilt in a throwaway
 * database, checked and dropped (docs/pitr.md, "Test restores of MySQL/MariaDB point-in-time jobs").
 */
export interface TestRestoreConfig {
  target:
    | { type: 'database'; sourceId?: string | null }
    | { type: 'directory'; path: string }
    | { type: 'redis'; database: number; sourceId?: string | null }
    | { type: 'sqlite'; path: string };
  schedule?: string | null;
  /** Allowed difference of row (Redis: key) counts against the figures recorded at backup time, in percent (default 0). */
  rowCountTolerancePercent?: number;
}

/** A job as listings see it; `schedule` is the effective one (the linked preset's when one is set). */
export interface JobSummary {
  id: string;
  name: string;
  schedule: string;
  scheduleFrom: 'job' | 'preset';
  enabled: boolean;
  /** Cron of the job's scheduled test restores (its `testRestore.schedule`); absent or null: none. */
  testRestoreSchedule?: string | null;
}

/** A storage destination as listings see it. */
export interface StorageSummary {
  configId: string;
  name: string;
  adapterId: string;
}

/** An adapter configuration as listings see it: no config, no secrets. `type` is the catalog's word for the kind. */
export interface AdapterConfigSummary {
  configId: string;
  name: string;
  type: 'database' | 'storage' | 'notification';
  adapterId: string;
  /** The agent a source is bound to (issue 48); null or absent when the server runs it. */
  agentId?: string | null;
}

/** Resolves saved configuration for the engine (registered by the catalog plugin). */
export interface JobCatalog {
  /** Every job with its effective schedule (scheduler, dashboard, history search). */
  listJobs(): Promise<JobSummary[]>;
  /** Every configured storage destination (storage statistics). */
  listStorageDestinations(): Promise<StorageSummary[]>;
  /**
   * Adapter configurations of one type, or with the given ids (unknown ids are left out), ordered by name
   * (observability's health checks, version pass and routes). `agentIds`: only sources bound to one of these agents. Optional so catalogs of other hosts and test doubles
   * that serve no listings still satisfy the port.
   */
  listAdapterConfigs?(filter: { type?: AdapterConfigSummary['type']; ids?: string[]; agentIds?: string[] }): Promise<AdapterConfigSummary[]>;
  /** Throws `NotFoundError('Job not found')` for an unknown id. */
  resolveRunPlan(jobId: string): Promise<RunPlan>;
  resolveAdapterConfig(configId: string): Promise<ResolvedAdapterConfig>;
  /**
   * The 32-byte key of a symmetric encryption profile (restores and downloads). A public-key profile has none: it
   * throws a 400 (ValidationError) saying the private key must come with the request.
   */
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

/** Who asked for an export: a person (audit log) or the server itself (all null: a scheduled self-backup). */
export interface ExportActor {
  userId: string | null;
  ipAddress: string | null;
  userAgent: string | null;
}

/**
 * Exports the configuration as the `GET /api/config/export` document, secrets sealed with the given encryption
 * profile's key (catalog plugin; observability's configuration self-backup writes it to a destination).
 */
export interface ConfigExporter {
  export(actor: ExportActor, encryptionProfileId?: string): Promise<object>;
}

/**
 * Current names of the records an audit entry points at (`resource` + `resourceId`), for entries written without a
 * name (updates, runs, storage actions). The catalog answers for the resources it owns (`job`, `adapter`,
 * `storage`, `credential`, `vault`, the template kinds); identity uses it when the audit log is read.
 */
export interface ResourceNames {
  /**
   * Names by id of the records of one `resource` that still exist; one query per call. Unknown resources and ids
   * of deleted records are simply absent from the map.
   */
  namesOf(resource: string, ids: readonly string[]): Promise<Map<string, string>>;
}
