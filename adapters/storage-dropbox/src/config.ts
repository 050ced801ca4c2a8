import { secretTarget, z } from '@holdfast/sdk';

const MiB = 1024 * 1024;
/** Dropbox wants appended chunks in multiples of 4 MiB and at most 150 MiB per request. */
export const CHUNK_UNIT_MiB = 4;
export const MAX_CHUNK_MiB = 148;

const httpUrl = (description: string) =>
  z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional()
    .describe(description);

/** Config of a Dropbox destination; the OAuth tokens come from the assigned OAUTH credential profile. */
export const dropboxStorageConfig = z.object({
  root: secretTarget(
    z
      .string()
      .trim()
      .default('/Holdfast')
      .refine((value) => value === '' || (/^\/[^/]/.test(value) && !/\/$/.test(value) && value.split('/').slice(1).every((segment) => segment !== '' && segment !== '.' && segment !== '..')), {
        message: 'root must be "" (the app\'s root) or an absolute folder path like "/Backups/host1" (no trailing "/", ".." or "//")',
      })
      .refine((value) => !/[\u0000-\u001f\u007f\\]/.test(value), { message: 'root must not contain control characters or "\\"' })
      .describe('Dropbox folder that holds the backups, e.g. /Holdfast ("" = the root; for an App-folder app, paths are inside the app folder); created on first upload'),
  ),
  chunkSizeMiB: z.coerce
    .number()
    .int()
    .min(CHUNK_UNIT_MiB)
    .max(MAX_CHUNK_MiB)
    .multipleOf(CHUNK_UNIT_MiB, { message: 'chunkSizeMiB must be a multiple of 4 (Dropbox upload session rule)' })
    .default(8)
    .describe('Size of each upload session chunk in MiB (multiple of 4, at most 148); memory use is one chunk per upload'),
  requestTimeoutSeconds: z.coerce.number().int().min(5).max(3600).default(300).describe('Timeout of one API request in seconds'),
  apiBaseUrl: secretTarget(httpUrl('Dropbox RPC API base URL (default https://api.dropboxapi.com); only for tests and proxies')),
  contentBaseUrl: secretTarget(httpUrl('Dropbox content API base URL (default https://content.dropboxapi.com); only for tests and proxies')),
  tokenUrl: secretTarget(httpUrl('OAuth 2 token endpoint (default https://api.dropboxapi.com/oauth2/token); only for tests and proxies')),
});

/** Parsed config of {@link dropboxStorageConfig}. */
export type DropboxStorageConfig = z.output<typeof dropboxStorageConfig>;

/** Bytes of one upload chunk. */
export function chunkBytes(config: DropboxStorageConfig): number {
  return config.chunkSizeMiB * MiB;
}
