import { z } from 'zod';
import { ADAPTER_CONFIG_TYPES } from '../adapter-configs/adapter-types.js';
import { CREDENTIAL_TYPES } from '../credentials/credential-types.js';
import { COMPRESSIONS, NOTIFICATION_EVENTS, testRestoreInput } from '../jobs/job-schemas.js';
import { bindingSchema } from '../templates/notification-templates.js';
import { nameField } from '../shared/schemas.js';

const id = z.string().min(1).max(64);
const ref = id.nullable();
const description = z.string().max(4000).nullable().optional();
const json = z.record(z.string(), z.unknown());

/** Shapes of the records inside an export, checked before anything is written. */
export const importRecordSchemas = {
  credentials: z.object({ id, name: nameField, description, type: z.enum(CREDENTIAL_TYPES), data: json }),
  encryptionProfiles: z.object({ id, name: nameField, description, publicKey: z.string().min(1).max(200).optional() }),
  retentionPolicies: z.object({ id, name: nameField, description, config: json, isDefault: z.boolean(), isSystem: z.boolean() }),
  namingTemplates: z.object({ id, name: nameField, description, pattern: z.string().min(1).max(500), isDefault: z.boolean(), isSystem: z.boolean() }),
  schedulePresets: z.object({ id, name: nameField, description, schedule: z.string().min(1).max(255), isSystem: z.boolean() }),
  adapters: z.object({
    id,
    name: nameField,
    type: z.enum(ADAPTER_CONFIG_TYPES),
    adapterId: z.string().min(1).max(255),
    config: json,
    metadata: json.nullable(),
    primaryCredentialId: ref,
    sshCredentialId: ref,
    defaultRetentionPolicyId: ref,
    excludeFromRestore: z.boolean(),
  }),
  notificationTemplates: z.object({ id, name: nameField, description, isDefault: z.boolean(), bindings: z.array(bindingSchema).max(100) }),
  jobs: z.object({
    id,
    name: nameField,
    schedule: z.string().min(1).max(255),
    enabled: z.boolean(),
    databases: z.array(z.string().max(255)).max(1000),
    compression: z.enum(COMPRESSIONS),
    pgCompression: z.string().max(64),
    compressionLevel: z.int().nullable().optional(),
    compressionThreads: z.int().nullable().optional(),
    archiveFormat: z.enum(['PLAIN', 'SEEKABLE']).optional(),
    fullEveryRuns: z.int().min(2).max(1000).nullable().optional(),
    fullEveryDays: z.int().min(1).max(3650).nullable().optional(),
    notificationEvents: z.enum(NOTIFICATION_EVENTS),
    skipVerification: z.boolean(),
    sourceId: id,
    encryptionProfileId: ref,
    namingTemplateId: ref,
    schedulePresetId: ref,
    notificationTemplateId: ref,
    testRestore: testRestoreInput.optional(),
    destinations: z
      .array(z.object({ configId: id, priority: z.int().min(0).max(1000), retention: json, retentionPolicyId: ref }))
      .min(1)
      .max(50),
  }),
  systemTasks: z.object({ task: z.string(), enabled: z.boolean(), schedule: z.string().min(1).max(255) }),
};

/** Import order: a record only refers to kinds imported before it. */
export const IMPORT_ORDER = [
  'credentials',
  'encryptionProfiles',
  'retentionPolicies',
  'namingTemplates',
  'schedulePresets',
  'adapters',
  'notificationTemplates',
  'jobs',
] as const;

/** One importable kind. */
export type ImportKind = (typeof IMPORT_ORDER)[number];

/** Parsed records by kind. */
export type ImportRecords = { [K in ImportKind]: Array<z.output<(typeof importRecordSchemas)[K]>> };

/** POST /api/config/import body. */
export const importBody = z.strictObject({
  document: z.record(z.string(), z.unknown()).describe('An export document (GET /api/config/export)'),
  mode: z.enum(['strict', 'merge']).default('strict').describe('strict: 409 on name conflicts; merge: keep existing records of the same name'),
  dryRun: z.boolean().default(false),
  key: z.string().min(1).max(2000).optional().describe('Profile key (hex/base64, or a recovery-kit key file) that opens an encrypted export'),
  encryptionProfileId: z.string().min(1).max(64).optional().describe('Or: an encryption profile of this installation with that key'),
});

/** Import outcome. */
export const importResultSchema = z.object({
  dryRun: z.boolean(),
  mode: z.enum(['strict', 'merge']),
  created: z.record(z.string(), z.number()),
  merged: z.record(z.string(), z.number()),
  conflicts: z.array(z.object({ kind: z.string(), name: z.string() })),
  warnings: z.array(z.string()),
});

export type ImportInput = z.output<typeof importBody>;
export type ImportResult = z.output<typeof importResultSchema>;
