import { secret, z } from '@holdfast/sdk';

// Values reach smbclient's command line (-c) or its arguments: `;` separates commands, `"` quotes, control
// characters end lines. Refusing them keeps a config from injecting commands.
const isSafeText = (value: string) => !/[\u0000-\u001f\u007f";]/.test(value);

/** Config of an SMB (Windows share, Samba, NAS) destination. */
export const smbStorageConfig = z.object({
  host: z.string().trim().min(1, 'host is required').refine(isSafeText, 'host contains characters that are not allowed').describe('SMB server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).default(445).describe('SMB port of the server'),
  share: z
    .string()
    .trim()
    .min(1, 'share is required')
    .refine((value) => isSafeText(value) && !/[\\/]/.test(value), 'share is the share name only, e.g. backups (no slashes)')
    .describe('Name of the share, e.g. backups for \\\\nas\\backups'),
  path: z
    .string()
    .trim()
    .default('')
    .refine(isSafeText, 'path contains characters that are not allowed (" ; or control characters)')
    .refine((value) => !value.split(/[\\/]/).some((segment) => segment === '.' || segment === '..'), 'path must not contain . or .. segments')
    .describe('Folder inside the share that holds the backups, e.g. holdfast/nightly; empty for the share itself. It must exist.'),
  username: z.string().trim().min(1, 'username is required').refine(isSafeText, 'username contains characters that are not allowed').describe('Login name'),
  password: secret(z.string().describe('Password (handed to smbclient through its environment, never on the command line)')),
  domain: z
    .string()
    .trim()
    .optional()
    .refine((value) => value === undefined || isSafeText(value), 'domain contains characters that are not allowed')
    .describe('Windows domain or workgroup of the account; empty for the server default'),
  protection: z
    .enum(['default', 'sign', 'encrypt'])
    .default('default')
    .describe('Require SMB signing, or SMB3 encryption of all traffic; default negotiates what the server asks for'),
  timeoutSeconds: z.coerce.number().int().min(5).max(3600).default(30).describe('Timeout of each SMB request in seconds'),
});

/** Parsed config of {@link smbStorageConfig}. */
export type SmbStorageConfig = z.output<typeof smbStorageConfig>;
