import { isKnownTimeZone } from '@holdfast/kernel';
import { z } from 'zod';

const count = (min: number, max: number) => z.int().min(min).max(max);

/** Shape of `notifications.config` (SPEC "System notification configuration"). */
export const notificationsConfigSchema = z.strictObject({
  globalChannels: z.array(z.string().min(1).max(64)).max(100),
  events: z.record(
    z.string().min(1).max(100),
    z.strictObject({
      enabled: z.boolean(),
      channels: z.array(z.string().min(1).max(64)).max(100).nullable(),
      notifyUser: z.enum(['none', 'also', 'only']),
    }),
  ),
});

/**
 * Every setting: its schema and default. Keys and defaults follow SPEC "SystemSetting"/"Limits"; the identity
 * plugin reads the rate-limit and audit keys from the same table, so numbers are stored as plain decimal text.
 */
export const SETTING_DEFINITIONS = {
  maxConcurrentJobs: { schema: count(1, 256), default: 1, description: 'Executions running at once' },
  maxConcurrentFiles: { schema: count(1, 16), default: 4, description: 'File transfers at once per job (directory sources)' },
  stuckJobTimeoutMinutes: {
    schema: count(1, 10_080).nullable(),
    default: 360 as number | null,
    description: 'Minutes without progress before a run is cancelled; null = never',
  },
  systemTimezone: {
    schema: z.string().min(1).max(100).refine(isKnownTimeZone, { message: 'must be an IANA time zone name such as Europe/Berlin' }),
    default: 'UTC',
    description: 'Zone for schedules, retention buckets and dates in names',
  },
  'privacy.recordTriggerActor': { schema: z.boolean(), default: true, description: 'Write the trigger actor into backup metadata' },
  authPoints: { schema: count(1, 100_000), default: 5, description: 'Authentication requests per window per IP' },
  authDuration: { schema: count(1, 86_400), default: 60, description: 'Authentication rate-limit window, seconds' },
  apiPoints: { schema: count(1, 100_000), default: 100, description: 'GET requests per window per IP' },
  apiDuration: { schema: count(1, 86_400), default: 60, description: 'GET rate-limit window, seconds' },
  mutationPoints: { schema: count(1, 100_000), default: 20, description: 'POST/PUT/DELETE requests per window per IP' },
  mutationDuration: { schema: count(1, 86_400), default: 60, description: 'Mutation rate-limit window, seconds' },
  'notification.logRetentionDays': { schema: count(1, 3650), default: 30, description: 'Days notification log entries are kept' },
  'notifications.config': {
    schema: notificationsConfigSchema,
    default: { globalChannels: [], events: {} } as z.output<typeof notificationsConfigSchema>,
    description: 'System notification channels and events',
  },
  'audit.retentionDays': { schema: count(1, 3650), default: 90, description: 'Days audit entries are kept' },
  // The engine's pitr_lag event (docs/pitr.md); 1 MiB at least (smaller fires on every flush), 1 PiB at most (a safe integer).
  'pitr.lagAlertBytes': {
    schema: count(1024 ** 2, 1024 ** 5),
    default: 1024 ** 3,
    description: 'Replication slot lag (WAL not yet archived) that raises pitr_lag, bytes',
  },
} as const;

/** A setting key. */
export type SettingKey = keyof typeof SETTING_DEFINITIONS;

/** Every key, in definition order. */
export const SETTING_KEYS = Object.keys(SETTING_DEFINITIONS) as SettingKey[];

/** The typed value of a key. */
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTING_DEFINITIONS)[K]['schema']>;

/** All settings as one object. */
export type SettingsValues = { [K in SettingKey]: SettingValue<K> };

/** The PUT body: any subset of keys, each validated by its own schema; unknown keys are refused. */
export const settingsPatchBody = z.strictObject(
  Object.fromEntries(SETTING_KEYS.map((key) => [key, SETTING_DEFINITIONS[key].schema.optional()])) as {
    [K in SettingKey]: z.ZodOptional<(typeof SETTING_DEFINITIONS)[K]['schema']>;
  },
);

/** The GET answer. */
export const settingsSchema = z.object(
  Object.fromEntries(SETTING_KEYS.map((key) => [key, SETTING_DEFINITIONS[key].schema])) as {
    [K in SettingKey]: (typeof SETTING_DEFINITIONS)[K]['schema'];
  },
);

/** Stored text of a value: strings as they are, everything else as JSON (numbers become plain decimals). */
export function encodeSetting(key: SettingKey, value: unknown): string {
  return key === 'systemTimezone' ? String(value) : JSON.stringify(value);
}

/** Typed value of stored text, or `undefined` when the text does not pass the key's schema. */
export function decodeSetting<K extends SettingKey>(key: K, raw: string): SettingValue<K> | undefined {
  let candidate: unknown = raw;
  if (key !== 'systemTimezone') {
    try {
      candidate = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  const parsed = SETTING_DEFINITIONS[key].schema.safeParse(candidate);
  return parsed.success ? (parsed.data as SettingValue<K>) : undefined;
}
