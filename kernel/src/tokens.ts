import type { InjectionToken } from 'tsyringe';
import type { AdapterContext } from './adapter-context.js';
import type { EventBus } from './event-bus.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { LocalPathPolicy } from './local-paths.js';
import type { IntegrityChecks } from './integrity-port.js';
import type { KernelLogger } from './logger.js';
import type { HoldfastPlugin } from './plugin.js';
import type { AccessPolicy, Authenticator, DatabasePort, RateLimiter } from './access.js';
import type { ConfigExporter, JobCatalog, ResourceNames, SecretSealer, SettingsReader } from './ports/catalog.js';
import type { BackupReader, ExecutionStats, PointInTimeStats, RecoveryKitBuilder, StorageUsage } from './ports/engine.js';
import type { DeliveryStats } from './ports/notifications.js';
import type { AdapterHealth, SystemTaskSchedules } from './ports/observability.js';
import type { AuditWriter, ProtectedActionGuard } from './ports/identity.js';

/** DI tokens. `Symbol.for` so two copies of the kernel agree on the same token. */
export const TOKENS = {
  /** The parsed config of one adapter instance (child container only). */
  AdapterConfig: Symbol.for('holdfast:adapter-config') as InjectionToken<unknown>,
  /** The {@link AdapterContext} of one adapter instance (child container only). */
  AdapterContext: Symbol.for('holdfast:adapter-context') as InjectionToken<AdapterContext>,
  AdapterRegistry: Symbol.for('holdfast:adapter-registry') as InjectionToken<AdapterRegistry>,
  EventBus: Symbol.for('holdfast:event-bus') as InjectionToken<EventBus>,
  Logger: Symbol.for('holdfast:logger') as InjectionToken<KernelLogger>,
  Plugins: Symbol.for('holdfast:plugins') as InjectionToken<HoldfastPlugin[]>,
  /** Runtime settings of the process: data dir, database URL, version. */
  RuntimeConfig: Symbol.for('holdfast:runtime-config') as InjectionToken<RuntimeConfig>,
  /** The persistence port (registered by the persistence plugin). */
  Database: Symbol.for('holdfast:database') as InjectionToken<DatabasePort>,
  Authenticator: Symbol.for('holdfast:authenticator') as InjectionToken<Authenticator>,
  AccessPolicy: Symbol.for('holdfast:access-policy') as InjectionToken<AccessPolicy>,
  RateLimiter: Symbol.for('holdfast:rate-limiter') as InjectionToken<RateLimiter>,
  /** Typed system settings (catalog plugin). */
  Settings: Symbol.for('holdfast:settings') as InjectionToken<SettingsReader>,
  /** Audit log writer (identity plugin). */
  AuditWriter: Symbol.for('holdfast:audit-writer') as InjectionToken<AuditWriter>,
  /** The fresh-second-factor check of actions that can lose backups (identity plugin; see {@link runProtectedAction}). */
  ProtectedActions: Symbol.for('holdfast:protected-actions') as InjectionToken<ProtectedActionGuard>,
  /** Seals/opens secrets with the system encryption key (catalog plugin). */
  SecretSealer: Symbol.for('holdfast:secret-sealer') as InjectionToken<SecretSealer>,
  /** Resolved job configuration for runs (catalog plugin). */
  JobCatalog: Symbol.for('holdfast:job-catalog') as InjectionToken<JobCatalog>,
  /** Exports the configuration document (catalog plugin; observability's configuration self-backup). */
  ConfigExporter: Symbol.for('holdfast:config-exporter') as InjectionToken<ConfigExporter>,
  /** Current names of catalog records for the audit log (catalog plugin; identity reads it when listing entries). */
  ResourceNames: Symbol.for('holdfast:resource-names') as InjectionToken<ResourceNames>,
  /** Recovery kit builder (engine plugin; the catalog's vault serves the kit). */
  RecoveryKitBuilder: Symbol.for('holdfast:recovery-kit-builder') as InjectionToken<RecoveryKitBuilder>,
  /** Starts integrity check runs (engine plugin; the integrity system task uses it). */
  IntegrityChecks: Symbol.for('holdfast:integrity-checks') as InjectionToken<IntegrityChecks>,
  /** Opens stored backups for downloads, decrypted on request (engine plugin; the storage browser uses it). */
  BackupReader: Symbol.for('holdfast:backup-reader') as InjectionToken<BackupReader>,
  /** Queue and history figures for metrics (engine plugin). */
  ExecutionStats: Symbol.for('holdfast:execution-stats') as InjectionToken<ExecutionStats>,
  /** Recorded storage snapshots of each destination (engine plugin; observability's storage alerts and usage route). */
  StorageUsage: Symbol.for('holdfast:storage-usage') as InjectionToken<StorageUsage>,
  /** Point-in-time archive figures of every job (engine plugin; observability's `/metrics` gauges). */
  PointInTimeStats: Symbol.for('holdfast:point-in-time-stats') as InjectionToken<PointInTimeStats>,
  /** The health state of adapter configurations (observability plugin; the catalog's adapter answers and connection tests). */
  AdapterHealth: Symbol.for('holdfast:adapter-health') as InjectionToken<AdapterHealth>,
  /** The system task schedules (observability plugin; the catalog's configuration export and import). */
  SystemTaskSchedules: Symbol.for('holdfast:system-task-schedules') as InjectionToken<SystemTaskSchedules>,
  /** Notification delivery figures for metrics (notifications plugin). */
  DeliveryStats: Symbol.for('holdfast:delivery-stats') as InjectionToken<DeliveryStats>,
  /** The operator's local path rule (apps/server); {@link instantiateAdapter} hands it to every adapter. */
  LocalPathPolicy: Symbol.for('holdfast:local-path-policy') as InjectionToken<LocalPathPolicy>,
} as const;

/** Process-level settings read once at start from the environment. */
export interface RuntimeConfig {
  /** Release number of the running server. */
  version: string;
  /** Directory for the embedded database, the generated system key and other local state. */
  dataDir: string;
  /** `postgres://...` selects PostgreSQL; undefined selects the embedded libsql file. */
  databaseUrl?: string;
  port: number;
  /** Extra directory scanned for community adapter packages. */
  pluginDir?: string;
  /** `kind-id` names to load exclusively (empty: all). */
  includeAdapters: string[];
  /** `kind-id` names never to load. */
  excludeAdapters: string[];
}
