import { secretTarget, z } from '@holdfast/sdk';

/** OneDrive wants fragments in multiples of 320 KiB, at most 60 MiB per request. */
export const FRAGMENT_UNIT_KiB = 320;
export const MAX_FRAGMENT_KiB = 60 * 1024;

const httpUrl = (description: string) =>
  z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional()
    .describe(description);

/** Config of a OneDrive destination; the OAuth tokens come from the assigned OAUTH credential profile. */
export const onedriveStorageConfig = z.object({
  driveId: secretTarget(
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9!_.-]{1,200}$/, 'driveId must be a drive id as Graph shows it')
      .optional()
      .describe('Drive to use (a OneDrive for Business or SharePoint document library id); unset = the signed-in user\'s OneDrive (/me/drive)'),
  ),
  folderPath: secretTarget(
    z
      .string()
      .trim()
      .default('Holdfast')
      .refine((value) => value === '' || value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'), {
        message: 'folderPath must be "" or folder names separated by "/" like "Backups/host1" (no leading or trailing "/", "." or "..")',
      })
      .refine((value) => !/[\u0000-\u001f\u007f\\"*:<>?|]/.test(value), { message: 'folderPath must not contain control characters or \\ " * : < > ? |' })
      .describe('Folder below the drive root that holds the backups; created on first upload ("" = the drive root)'),
  ),
  tenant: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9.-]{1,100}$/, 'tenant must be "common", "consumers", "organizations", a tenant id or a domain')
    .default('common')
    .describe('Microsoft Entra tenant of the app registration for the token endpoint: common, consumers, organizations, a tenant id or domain'),
  fragmentSizeKiB: z.coerce
    .number()
    .int()
    .min(FRAGMENT_UNIT_KiB)
    .max(MAX_FRAGMENT_KiB)
    .multipleOf(FRAGMENT_UNIT_KiB, { message: 'fragmentSizeKiB must be a multiple of 320 (OneDrive upload session rule)' })
    .default(10_240)
    .describe('Size of each upload session fragment in KiB (multiple of 320, at most 61440 = 60 MiB); memory use is one fragment per upload'),
  requestTimeoutSeconds: z.coerce.number().int().min(5).max(3600).default(300).describe('Timeout of one API request in seconds'),
  apiBaseUrl: secretTarget(httpUrl('Microsoft Graph base URL (default https://graph.microsoft.com/v1.0); only for tests and national clouds')),
  authBaseUrl: secretTarget(httpUrl('Microsoft identity platform base URL (default https://login.microsoftonline.com); only for tests and national clouds')),
});

/** Parsed config of {@link onedriveStorageConfig}. */
export type OnedriveStorageConfig = z.output<typeof onedriveStorageConfig>;

/** Bytes of one upload fragment. */
export function fragmentBytes(config: OnedriveStorageConfig): number {
  return config.fragmentSizeKiB * 1024;
}
