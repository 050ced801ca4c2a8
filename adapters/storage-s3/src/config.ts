import { secret, secretTarget, z } from '@holdfast/sdk';
import { S3_PRESETS, resolveEndpoint } from './internal/presets.js';

/** S3 allows parts of 5 MiB to 5 GiB; Holdfast caps them at 64 MiB and 32 in parallel (SPEC "Limits"). */
export const MIN_PART_MiB = 5;
export const MAX_PART_MiB = 64;
export const MAX_PARALLEL_PARTS = 32;

/** S3 Object Lock retention modes (S3 spells them in capitals). */
export const OBJECT_LOCK_MODES = ['GOVERNANCE', 'COMPLIANCE'] as const;
/** Longest lock Holdfast sets: 100 years (S3 itself has no lower cap that matters here). */
export const MAX_LOCK_DAYS = 36_500;

const prefixField = z
  .string()
  .trim()
  .default('')
  .refine((value) => value === '' || value.split('/').every((segment, i, all) => (segment !== '' || i === all.length - 1) && segment !== '.' && segment !== '..'), {
    message: 'prefix must be a relative path like "backups/host1" (no leading "/", "//", "." or "..")',
  })
  .refine((value) => !/[\u0000-\u001f\u007f\\]/.test(value), { message: 'prefix must not contain control characters or "\\"' });

/**
 * Config of an S3 destination. Credentials: accessKeyId + secretAccessKey here, or an assigned ACCESS_KEY credential
 * profile (`primary`); the config pair wins when both are set.
 */
export const s3StorageConfig = z
  .object({
    preset: secretTarget(
      z.enum(S3_PRESETS).default('aws').describe('Provider preset: fills endpoint, region and path style defaults (aws, r2, b2, wasabi, minio, hetzner, custom)'),
    ),
    endpoint: secretTarget(
      z
        .url({ protocol: /^https?$/, message: 'endpoint must be an http(s) URL' })
        .optional()
        .describe('S3 API URL, e.g. http://minio.lan:9000; unset = the preset\'s endpoint (AWS: the regional default)'),
    ),
    accountId: secretTarget(
      z.string().trim().regex(/^[A-Za-z0-9-]{1,64}$/, 'accountId must be letters, digits or "-"').optional().describe('Cloudflare account id (preset r2 only): fills the endpoint'),
    ),
    region: secretTarget(
      z.string().trim().regex(/^[A-Za-z0-9-]{1,64}$/, 'region must be letters, digits or "-"').optional().describe('Region, e.g. eu-central-1; defaults per preset (aws us-east-1, r2 auto, wasabi us-east-1, hetzner fsn1; b2 needs one)'),
    ),
    forcePathStyle: z.boolean().optional().describe('Address buckets as <endpoint>/<bucket> instead of <bucket>.<endpoint>; defaults per preset (true for minio, r2 and custom)'),
    bucket: secretTarget(
      z.string().trim().regex(/^[A-Za-z0-9._-]{1,255}$/, 'bucket must be 1-255 letters, digits, ".", "_" or "-"').describe('Bucket that holds the backups; it must exist'),
    ),
    prefix: prefixField.describe('Folder-like key prefix inside the bucket under which every object is stored ("" = bucket root)'),
    storageClass: z
      .string()
      .trim()
      .regex(/^[A-Z0-9_]{1,40}$/, 'storageClass must be an S3 storage class name such as STANDARD_IA')
      .optional()
      .describe('Storage class of new objects (STANDARD, STANDARD_IA, INTELLIGENT_TIERING, GLACIER_IR, GLACIER, DEEP_ARCHIVE...); GLACIER and DEEP_ARCHIVE must be restored before a restore can read them'),
    partSizeMiB: z.coerce.number().int().min(MIN_PART_MiB).max(MAX_PART_MiB).default(8).describe('Size of each multipart upload part in MiB (5-64); grows for large backups'),
    maxPartSizeMiB: z.coerce
      .number()
      .int()
      .min(MIN_PART_MiB)
      .max(MAX_PART_MiB)
      .default(MAX_PART_MiB)
      .describe('Largest part size in MiB the upload may grow to (keeps 10,000 parts enough); caps one backup at 10,000 x this size'),
    parallelParts: z.coerce.number().int().min(1).max(MAX_PARALLEL_PARTS).default(8).describe('Parts uploaded in parallel (1-32); memory use is at most parallelParts x part size'),
    accessKeyId: z.string().trim().min(1).optional().describe('Access key id; falls back to the assigned ACCESS_KEY credential profile'),
    secretAccessKey: secret(z.string().min(1).optional().describe('Secret access key; falls back to the assigned ACCESS_KEY credential profile')),
    sessionToken: secret(z.string().min(1).optional().describe('Session token of temporary credentials (optional)')),
    objectLockMode: z
      .enum(OBJECT_LOCK_MODES, { error: 'objectLockMode must be GOVERNANCE or COMPLIANCE' })
      .optional()
      .describe(
        'S3 Object Lock: write every backup with a retention in this mode (GOVERNANCE: users with s3:BypassGovernanceRetention may still delete; COMPLIANCE: nobody can until the date). Unset = no object lock. The bucket must have been created with Object Lock enabled',
      ),
    objectLockDays: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_LOCK_DAYS)
      .default(30)
      .describe('Object lock only: days a backup stays locked when its job\'s retention policy has no computable end (keep-last, keep-all, or no policy)'),
    objectLockMarginDays: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_LOCK_DAYS)
      .default(1)
      .describe('Object lock only: days added to the date the retention policy may first delete a backup, so retention never meets a lock it set itself'),
    connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('TCP connect timeout in seconds'),
    requestTimeoutSeconds: z.coerce.number().int().min(5).max(3600).default(300).describe('Idle socket timeout of one request in seconds'),
  })
  .superRefine((config, ctx) => {
    const resolved = resolveEndpoint(config);
    if ('problems' in resolved) {
      for (const problem of resolved.problems) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
    }
    if (config.maxPartSizeMiB < config.partSizeMiB) {
      ctx.addIssue({ code: 'custom', path: ['maxPartSizeMiB'], message: 'maxPartSizeMiB must be at least partSizeMiB' });
    }
    if (Boolean(config.accessKeyId) !== Boolean(config.secretAccessKey)) {
      ctx.addIssue({ code: 'custom', path: ['secretAccessKey'], message: 'set accessKeyId and secretAccessKey together (or neither, to use a credential profile)' });
    }
  });

/** Parsed config of {@link s3StorageConfig}. */
export type S3StorageConfig = z.output<typeof s3StorageConfig>;
