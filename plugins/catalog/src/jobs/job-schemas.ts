import { ARCHIVE_FORMATS, FULL_EVERY_DAYS, FULL_EVERY_RUNS } from './archive-options.js';
import { COMPRESSION_CODECS, lineText } from '@holdfast/kernel';
import { z } from 'zod';
import { nameField, refId, timestamp } from '../shared/schemas.js';

/** Compression codecs a job may use (ZSTD where the engine has it). */
export const COMPRESSIONS = COMPRESSION_CODECS;
/** Legacy per-job notification setting (SPEC), replaced by notification templates. */
export const NOTIFICATION_EVENTS = ['ALWAYS', 'FAILURE_ONLY', 'SUCCESS_ONLY'] as const;

/** How a destination receives the backup of a source bound to an agent (issue 48; docs/agents.md). */
export const DESTINATION_TRANSFERS = ['relay', 'direct'] as const;

/** One destination of a job in a request. */
export const destinationInput = z.strictObject({
  configId: refId.describe('Adapter configuration of type storage'),
  priority: z.int().min(0).max(1000).default(0).describe('Upload order, ascending'),
  retention: z.record(z.string(), z.unknown()).default({}).describe('Legacy retention JSON (a gfs policy); retentionPolicyId wins'),
  retentionPolicyId: refId.nullable().optional(),
  transfer: z
    .enum(DESTINATION_TRANSFERS)
    .default('relay')
    .describe('For a source bound to an agent: relay (through the server) or direct (the agent uploads itself); ignored otherwise'),
});

/** A job's scratch target for test restores (issue 19); the engine restores the newest backup there and drops it. */
export const testRestoreInput = z
  .strictObject({
    target: z.discriminatedUnion('type', [
      z.strictObject({
        type: z.literal('database'),
        sourceId: refId.nullable().optional().describe("Source configuration of the server where a throwaway database is created; default: the job's source. PostgreSQL or MySQL/MariaDB"),
      }),
      z.strictObject({
        type: z.literal('directory'),
        path: lineText({ min: 2, max: 4096 }).regex(/^\//, 'must be an absolute path').describe('Folder below which a throwaway folder is created (directory sources)'),
      }),
      z.strictObject({
        type: z.literal('redis'),
        database: z.int().min(0).max(1023).describe('Database index reserved for test restores: it must be empty, and it is flushed after each test restore'),
        sourceId: refId.nullable().optional().describe("Redis source configuration of the server holding that index; default: the job's source"),
      }),
      z.strictObject({
        type: z.literal('sqlite'),
        path: lineText({ min: 2, max: 4096 }).regex(/^\//, 'must be an absolute path').describe('Folder below which a throwaway folder with the restored database file is created (SQLite sources)'),
      }),
    ]),
    schedule: z.string().min(1).max(255).nullable().optional().describe('5-part cron of scheduled test restores; null or absent: on demand only'),
    rowCountTolerancePercent: z.number().min(0).max(100).optional().describe('Allowed difference of row (Redis: key) counts against the backup-time figures, percent (default 0)'),
  })
  .nullable();

const jobFields = {
  name: nameField,
  schedule: z.string().min(1).max(255).describe('5-part cron; the linked preset overrides it'),
  enabled: z.boolean(),
  databases: z.array(z.string().min(1).max(255)).max(1000),
  compression: z.enum(COMPRESSIONS),
  pgCompression: z.string().max(64),
  compressionLevel: z.int().nullable().describe("Level of the job's codec (GZIP 1-9, BROTLI 0-11, ZSTD 1-19); null: the codec's default"),
  compressionThreads: z.int().nullable().describe('ZSTD only: worker threads compressing at once (1-16); null: the number of cores, at most 4'),
  archiveFormat: z
    .enum(ARCHIVE_FORMATS)
    .describe('PLAIN: the source\'s own format (tar, dump). SEEKABLE: a Holdfast seekable archive (single files, folders or databases restore by range reads; docs/formats/archive.md)'),
  fullEveryRuns: z
    .int()
    .min(FULL_EVERY_RUNS.min)
    .max(FULL_EVERY_RUNS.max)
    .nullable()
    .describe('SEEKABLE directory jobs: incremental chains of at most this many runs (the full included); null with fullEveryDays null: every run is full'),
  fullEveryDays: z
    .int()
    .min(FULL_EVERY_DAYS.min)
    .max(FULL_EVERY_DAYS.max)
    .nullable()
    .describe("SEEKABLE directory jobs: a new full backup once the chain's full is this many days old"),
  notificationEvents: z.enum(NOTIFICATION_EVENTS),
  skipVerification: z.boolean(),
  sourceId: refId.describe('Adapter configuration of type database'),
  encryptionProfileId: refId.nullable(),
  namingTemplateId: refId.nullable().describe('null: the default naming template at run time'),
  schedulePresetId: refId.nullable(),
  notificationTemplateId: refId.nullable(),
  destinations: z.array(destinationInput).min(1).max(50),
  testRestore: testRestoreInput,
};

/** POST /api/jobs: `schedule` may be left out when a preset is linked. */
export const createJobBody = z.strictObject({
  ...jobFields,
  schedule: jobFields.schedule.optional(),
  enabled: jobFields.enabled.default(true),
  databases: jobFields.databases.default([]),
  compression: jobFields.compression.default('NONE'),
  pgCompression: jobFields.pgCompression.default(''),
  compressionLevel: jobFields.compressionLevel.default(null),
  compressionThreads: jobFields.compressionThreads.default(null),
  archiveFormat: jobFields.archiveFormat.default('PLAIN'),
  fullEveryRuns: jobFields.fullEveryRuns.default(null),
  fullEveryDays: jobFields.fullEveryDays.default(null),
  notificationEvents: jobFields.notificationEvents.default('ALWAYS'),
  skipVerification: jobFields.skipVerification.default(false),
  encryptionProfileId: jobFields.encryptionProfileId.optional(),
  namingTemplateId: jobFields.namingTemplateId.optional(),
  schedulePresetId: jobFields.schedulePresetId.optional(),
  notificationTemplateId: jobFields.notificationTemplateId.optional(),
  testRestore: jobFields.testRestore.optional(),
});

/** PUT /api/jobs/:id: any subset; `destinations` replaces the whole list. */
export const updateJobBody = z.strictObject({
  name: jobFields.name.optional(),
  schedule: jobFields.schedule.optional(),
  enabled: jobFields.enabled.optional(),
  databases: jobFields.databases.optional(),
  compression: jobFields.compression.optional(),
  pgCompression: jobFields.pgCompression.optional(),
  compressionLevel: jobFields.compressionLevel.optional(),
  compressionThreads: jobFields.compressionThreads.optional(),
  archiveFormat: jobFields.archiveFormat.optional(),
  fullEveryRuns: jobFields.fullEveryRuns.optional(),
  fullEveryDays: jobFields.fullEveryDays.optional(),
  notificationEvents: jobFields.notificationEvents.optional(),
  skipVerification: jobFields.skipVerification.optional(),
  sourceId: jobFields.sourceId.optional(),
  encryptionProfileId: jobFields.encryptionProfileId.optional(),
  namingTemplateId: jobFields.namingTemplateId.optional(),
  schedulePresetId: jobFields.schedulePresetId.optional(),
  notificationTemplateId: jobFields.notificationTemplateId.optional(),
  destinations: jobFields.destinations.optional(),
  testRestore: jobFields.testRestore.optional(),
});

/** POST /api/jobs/:id/clone */
export const cloneJobBody = z.strictObject({ name: nameField.optional() }).optional();

/** A job destination as answered. */
export const destinationSchema = z.object({
  id: z.string(),
  jobId: z.string(),
  configId: z.string(),
  priority: z.number().int(),
  retention: z.record(z.string(), z.unknown()),
  retentionPolicyId: z.string().nullable(),
  transfer: z.enum(DESTINATION_TRANSFERS),
});

/** A notification channel linked to a job: through the job's notification template, else the default template. */
export const jobNotificationSchema = z.object({
  channelId: z.string(),
  name: z.string().describe('Display name of the channel'),
  adapterId: z.string(),
  templateId: z.string().describe('The notification template that links the channel'),
  isDefaultTemplate: z.boolean().describe('True when the job names no template and the default template applies'),
  onSuccess: z.boolean(),
  onPartial: z.boolean(),
  onFailed: z.boolean(),
});

/** A job as answered. */
export const jobSchema = z.object({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  effectiveSchedule: z.string().describe('The preset schedule when a preset is linked, else schedule'),
  enabled: z.boolean(),
  databases: z.array(z.string()),
  compression: z.enum(COMPRESSIONS),
  pgCompression: z.string(),
  compressionLevel: z.number().int().nullable(),
  compressionThreads: z.number().int().nullable(),
  archiveFormat: z.enum(ARCHIVE_FORMATS),
  fullEveryRuns: z.number().int().nullable(),
  fullEveryDays: z.number().int().nullable(),
  notificationEvents: z.enum(NOTIFICATION_EVENTS),
  skipVerification: z.boolean(),
  sourceId: z.string(),
  encryptionProfileId: z.string().nullable(),
  namingTemplateId: z.string().nullable(),
  schedulePresetId: z.string().nullable(),
  notificationTemplateId: z.string().nullable(),
  testRestore: testRestoreInput.describe('Scratch target of test restores; null: none'),
  notifications: z.array(jobNotificationSchema).describe('SPEC "notifications": the channels this job notifies, with the outcomes each receives'),
  destinations: z.array(destinationSchema),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export type CreateJobInput = z.output<typeof createJobBody>;
export type UpdateJobInput = z.output<typeof updateJobBody>;
export type DestinationInput = z.output<typeof destinationInput>;
export type TestRestoreInput = NonNullable<z.output<typeof testRestoreInput>>;
export type JobView = z.output<typeof jobSchema>;
