import { secret, z } from '@holdfast/sdk';

/** Access tiers a block blob may be written in (Azure "Set Blob Tier"). */
export const ACCESS_TIERS = ['Hot', 'Cool', 'Cold', 'Archive'] as const;

/** Holdfast's object-lock modes (the names of the S3 destination); Azure calls them Unlocked and Locked. */
export const OBJECT_LOCK_MODES = ['GOVERNANCE', 'COMPLIANCE'] as const;
/** Longest immutability period Holdfast sets: 100 years. */
export const MAX_LOCK_DAYS = 36_500;

/**
 * Config of an Azure Blob Storage destination. Credentials: a connection string, or an account name with its key;
 * either may instead come from the `primary` credential profile (config fields win).
 */
export const azureBlobStorageConfig = z.object({
  connectionString: secret(
    z
      .string()
      .trim()
      .optional()
      .describe('Storage account connection string (AccountKey or SharedAccessSignature); replaces accountName/accountKey/endpoint'),
  ),
  accountName: z
    .string()
    .trim()
    .regex(/^[a-z0-9]{3,24}$/, 'accountName must be 3-24 lowercase letters or digits')
    .optional()
    .describe('Storage account name, used with accountKey'),
  accountKey: secret(z.string().trim().optional().describe('Storage account access key (base64), used with accountName')),
  endpoint: z
    .url({ protocol: /^https?$/, message: 'endpoint must be an http(s) URL' })
    .optional()
    .describe(
      'Blob service URL; defaults to https://<accountName>.blob.core.windows.net. Set it for Azurite (http://127.0.0.1:10000/<account>) or sovereign clouds',
    ),
  container: z
    .string()
    .trim()
    .regex(/^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, 'container must be 3-63 lowercase letters, digits or single hyphens')
    .describe('Container that holds the backups; it must exist'),
  prefix: z
    .string()
    .trim()
    .default('')
    .refine((value) => value === '' || !value.split('/').some((segment, i, all) => (segment === '' && i < all.length - 1) || segment === '.' || segment === '..'), {
      message: 'prefix must be a relative path like "backups/host1" (no leading "/", "//", "." or "..")',
    })
    .describe('Folder-like name prefix inside the container under which every key is stored ("" = container root)'),
  blockSizeMiB: z.coerce
    .number()
    .int()
    .min(1)
    .max(4000)
    .default(8)
    .describe('Size of each uploaded block in MiB; grows automatically when a known size would need more than 50,000 blocks'),
  concurrency: z.coerce
    .number()
    .int()
    .min(1)
    .max(32)
    .default(8)
    .describe('Blocks uploaded in parallel per put; memory use is about blockSizeMiB x concurrency'),
  accessTier: z.enum(ACCESS_TIERS).optional().describe('Access tier of new blobs; unset = the account default tier'),
  objectLockMode: z
    .enum(OBJECT_LOCK_MODES, { error: 'objectLockMode must be GOVERNANCE or COMPLIANCE' })
    .optional()
    .describe(
      'Version-level immutability: give every backup blob an immutability policy until its retain-until date. GOVERNANCE = Azure "Unlocked" policy (someone allowed to manage immutability policies can still shorten or remove it); COMPLIANCE = Azure "Locked" policy (nobody can shorten or remove it). Unset = no immutability. The container must have version-level immutability support enabled',
    ),
  objectLockDays: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LOCK_DAYS)
    .default(30)
    .describe("Immutability only: days a backup stays immutable when its job's retention policy has no computable end (keep-last, keep-all, or no policy)"),
  objectLockMarginDays: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_LOCK_DAYS)
    .default(1)
    .describe('Immutability only: days added to the date the retention policy may first delete a backup, so retention never meets a policy it set itself'),
  maxTries: z.coerce
    .number()
    .int()
    .min(1)
    .max(10)
    .default(4)
    .describe('Attempts per request on network errors and 5xx/429 answers (the connection test tries once)'),
});

/** Parsed config of {@link azureBlobStorageConfig}. */
export type AzureBlobStorageConfig = z.output<typeof azureBlobStorageConfig>;
