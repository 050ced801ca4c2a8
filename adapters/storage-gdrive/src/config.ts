import { secretTarget, z } from '@holdfast/sdk';

const MiB = 1024 * 1024;
export const MAX_CHUNK_MiB = 256;

const httpUrl = (description: string) =>
  z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional()
    .describe(description);

/** Config of a Google Drive destination; the OAuth tokens come from the assigned OAUTH credential profile. */
export const gdriveStorageConfig = z.object({
  parentFolderId: secretTarget(
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,200}$/, 'parentFolderId must be a Drive folder id (letters, digits, "_" or "-") or "root"')
      .default('root')
      .describe('Id of the Drive folder under which folderPath lives: "root" (My Drive), or a folder / shared drive id from its URL'),
  ),
  folderPath: secretTarget(
    z
      .string()
      .trim()
      .default('Holdfast')
      .refine((value) => value === '' || value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'), {
        message: 'folderPath must be "" or folder names separated by "/" like "Backups/host1" (no leading or trailing "/", "." or "..")',
      })
      .refine((value) => !/[\u0000-\u001f\u007f\\']/.test(value), { message: 'folderPath must not contain control characters, "\\" or quotes' })
      .describe('Folder (path of folder names) below parentFolderId that holds the backups; created on first upload ("" = parentFolderId itself)'),
  ),
  chunkSizeMiB: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_CHUNK_MiB)
    .default(8)
    .describe('Size of each resumable upload chunk in MiB (whole MiB are multiples of 256 KiB, as Drive requires); memory use is one chunk per upload'),
  requestTimeoutSeconds: z.coerce.number().int().min(5).max(3600).default(300).describe('Timeout of one API request in seconds'),
  apiBaseUrl: secretTarget(httpUrl('Drive API base URL (default https://www.googleapis.com; /drive/v3 and /upload/drive/v3 below it); only for tests and proxies')),
  tokenUrl: secretTarget(httpUrl('OAuth 2 token endpoint (default https://oauth2.googleapis.com/token); only for tests and proxies')),
});

/** Parsed config of {@link gdriveStorageConfig}. */
export type GdriveStorageConfig = z.output<typeof gdriveStorageConfig>;

/** Bytes of one upload chunk. */
export function chunkBytes(config: GdriveStorageConfig): number {
  return config.chunkSizeMiB * MiB;
}
