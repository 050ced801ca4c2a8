import type { OrmDatabase } from '@holdfast/orm-port';
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/knex';
import { z } from 'zod';
import { ObservabilitySettingEntity } from './store/entities.js';
import { isValidCron } from './tasks/runner.js';

const cron = z.string().trim().min(9).max(255);

/** Health thresholds: consecutive failed checks before DEGRADED and before OFFLINE (one success: ONLINE again). */
export const healthSettingsSchema = z
  .strictObject({
    degradedAfter: z.int().min(1).max(100),
    offlineAfter: z.int().min(1).max(1000),
    /** Days `health_check_logs` and `system_task_runs` rows are kept (pruned by CLEAN_OLD_LOGS). */
    logRetentionDays: z.int().min(1).max(3650),
  })
  .refine((value) => value.offlineAfter >= value.degradedAfter, { message: 'offlineAfter must be at least degradedAfter', path: ['offlineAfter'] });

/** Storage alerts; `null` switches one off. */
export const storageAlertSettingsSchema = z.strictObject({
  /** Growth of a destination between two snapshots, in percent, that raises a usage-spike alert. */
  usageSpikePercent: z.int().min(1).max(100_000).nullable(),
  /** Bytes per destination (adapter configuration id) at or above which a size-limit alert is raised. */
  sizeLimits: z.record(z.string().min(1).max(64), z.int().min(1)),
  /** Hours without a new backup file on a destination that raise a no-new-backup alert. */
  noBackupHours: z.int().min(1).max(24 * 365).nullable(),
});

/** Scheduled configuration self-backup. */
export const configBackupSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  /** Storage destination (adapter configuration id) the export is written to. */
  storageId: z.string().min(1).max(64).nullable(),
  schedule: cron,
  /** Newest files kept; older ones under the prefix are deleted after each successful backup. */
  keep: z.int().min(1).max(1000),
  /** Encryption profile whose key seals the secrets inside the export; `null` leaves secrets out of it. */
  encryptionProfileId: z.string().min(1).max(64).nullable(),
  /** Key prefix (a folder) of the files in the destination. */
  prefix: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, { message: 'letters, digits, ".", "_", "-" and "/" between segments' }),
});

/** Upper bound of a byte budget (1 PiB, as the engine's route): a guard against typos, not a real limit. */
const MAX_BYTE_BUDGET = 2 ** 50;

/**
 * Scheduled integrity check (`INTEGRITY_CHECK`, beyond SPEC's task list). Each run re-reads at most `byteBudget`
 * bytes of backups; the next run continues after the last backup this one checked, so large installations spread
 * one full pass over several runs. `null` checks every backup in every run.
 */
export const integrityCheckSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  schedule: cron.refine((value) => isValidCron(value), { message: 'a 5-part cron expression' }),
  byteBudget: z.int().min(1).max(MAX_BYTE_BUDGET).nullable(),
});

/** Prometheus endpoint. */
export const metricsSettingsSchema = z.strictObject({
  /** SHA-256 (hex) of the bearer token `/metrics` asks for; `null` leaves `/metrics` open. Never returned. */
  bearerTokenSha256: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
});

export const OBSERVABILITY_SETTINGS = {
  health: { schema: healthSettingsSchema, default: { degradedAfter: 1, offlineAfter: 3, logRetentionDays: 30 } },
  storageAlerts: { schema: storageAlertSettingsSchema, default: { usageSpikePercent: 50, sizeLimits: {}, noBackupHours: null } },
  configBackup: { schema: configBackupSettingsSchema, default: { enabled: false, storageId: null, encryptionProfileId: null, schedule: '0 2 * * *', keep: 7, prefix: 'holdfast-config' } },
  metrics: { schema: metricsSettingsSchema, default: { bearerTokenSha256: null } },
  // Off by default: every run downloads backups from the destinations (egress fees on cloud storage, bandwidth).
  integrityCheck: { schema: integrityCheckSettingsSchema, default: { enabled: false, schedule: '0 5 * * *', byteBudget: 10 * 1024 ** 3 } },
} as const;

export type HealthSettings = z.output<typeof healthSettingsSchema>;
export type StorageAlertSettings = z.output<typeof storageAlertSettingsSchema>;
export type ConfigBackupSettings = z.output<typeof configBackupSettingsSchema>;
export type MetricsSettings = z.output<typeof metricsSettingsSchema>;
export type IntegrityCheckSettings = z.output<typeof integrityCheckSettingsSchema>;

export interface ObservabilitySettingsValues {
  health: HealthSettings;
  storageAlerts: StorageAlertSettings;
  configBackup: ConfigBackupSettings;
  metrics: MetricsSettings;
  integrityCheck: IntegrityCheckSettings;
}

type Key = keyof ObservabilitySettingsValues;
const KEYS = Object.keys(OBSERVABILITY_SETTINGS) as Key[];

/** SHA-256 hex of a bearer token (only the hash is stored). */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads and writes the observability settings; a stored value that no longer parses falls back to its default. */
export class ObservabilitySettings {
  constructor(private readonly database: () => OrmDatabase) {}

  private em(): EntityManager {
    return this.database().em();
  }

  async get<K extends Key>(key: K): Promise<ObservabilitySettingsValues[K]> {
    const row = await this.em().findOne(ObservabilitySettingEntity, { key });
    const definition = OBSERVABILITY_SETTINGS[key];
    if (!row) return definition.default as ObservabilitySettingsValues[K];
    try {
      const parsed = definition.schema.safeParse(JSON.parse(row.value));
      return (parsed.success ? parsed.data : definition.default) as ObservabilitySettingsValues[K];
    } catch {
      return definition.default as ObservabilitySettingsValues[K];
    }
  }

  async all(): Promise<ObservabilitySettingsValues> {
    const values = await Promise.all(KEYS.map((key) => this.get(key)));
    return Object.fromEntries(KEYS.map((key, index) => [key, values[index]])) as unknown as ObservabilitySettingsValues;
  }

  /** Stores the given (already validated) values. */
  async set(values: Partial<ObservabilitySettingsValues>): Promise<void> {
    const em = this.em();
    for (const key of KEYS) {
      if (values[key] === undefined) continue;
      await em.upsert(ObservabilitySettingEntity, { key, value: JSON.stringify(values[key]), updatedAt: new Date() });
    }
    await em.flush();
  }
}
