import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A backup job (SPEC "Job"). JSON-in-text columns follow the SPEC ("JSON string"). */
export const JobEntity = defineEntity({
  name: 'Job',
  tableName: 'jobs',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().unique('jobs_name_unique'),
    schedule: p.string(),
    enabled: p.boolean().default(true),
    databases: p.text(),
    compression: p.string().default('NONE'),
    pgCompression: p.string().default(''),
    /** Null: the codec's default level. */
    compressionLevel: p.integer().nullable(),
    /** ZSTD worker threads; null: the engine's default. */
    compressionThreads: p.integer().nullable(),
    /** `PLAIN` or `SEEKABLE` (issue 20). */
    archiveFormat: p.string().default('PLAIN'),
    /** Incremental chains: runs per chain, the full included; null: no run-count limit. */
    fullEveryRuns: p.integer().nullable(),
    /** Incremental chains: a new full once the chain's full is this many days old; null: no age limit. */
    fullEveryDays: p.integer().nullable(),
    notificationEvents: p.string().default('ALWAYS'),
    skipVerification: p.boolean().default(false),
    sourceId: p.string().length(36).index('jobs_source_id_index'),
    encryptionProfileId: p.string().length(36).nullable().index('jobs_encryption_profile_id_index'),
    namingTemplateId: p.string().length(36).nullable(),
    schedulePresetId: p.string().length(36).nullable(),
    notificationTemplateId: p.string().length(36).nullable(),
    /** JSON of the test restore target (kernel `TestRestoreConfig`); null: none. */
    testRestore: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** One destination of a job (SPEC "JobDestination"). */
export const JobDestinationEntity = defineEntity({
  name: 'JobDestination',
  tableName: 'job_destinations',
  properties: {
    id: p.string().primary().length(36),
    jobId: p.string().length(36).index('job_destinations_job_id_index'),
    configId: p.string().length(36).index('job_destinations_config_id_index'),
    priority: p.integer().default(0),
    retention: p.text(),
    retentionPolicyId: p.string().length(36).nullable(),
    /** `relay` or `direct` (issue 48): see docs/agents.md "Direct uploads". */
    transfer: p.string().length(16).default('relay'),
  },
});

export type JobRow = InferEntity<typeof JobEntity>;
export type JobDestinationRow = InferEntity<typeof JobDestinationEntity>;
