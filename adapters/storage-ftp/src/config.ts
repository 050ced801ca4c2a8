import { secret, z } from '@holdfast/sdk';

// Paths go into FTP commands line by line; a CR, LF or NUL would end a command early (command injection).
const noControlCharacters = (value: string) => !/[\u0000-\u001f\u007f]/.test(value);

/** Config of an FTP or FTPS destination. */
export const ftpStorageConfig = z.object({
  host: z.string().trim().min(1, 'host is required').refine(noControlCharacters, 'host must not contain control characters').describe('FTP server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).optional().describe('Control port; defaults to 21, or 990 with implicit TLS'),
  username: z.string().trim().min(1, 'username is required').refine(noControlCharacters, 'username must not contain control characters').describe('Login name'),
  password: secret(z.string().refine(noControlCharacters, 'password must not contain control characters').describe('Password')),
  secure: z
    .enum(['explicit', 'implicit', 'none'])
    .default('explicit')
    .describe('TLS: explicit (AUTH TLS on the normal port, recommended), implicit (TLS from the first byte, usually port 990) or none (plain FTP: password and data travel unencrypted)'),
  ca: z
    .string()
    .trim()
    .optional()
    .describe('PEM certificate(s) to trust for a self-signed or private-CA server certificate, in addition to the system CAs'),
  rejectUnauthorized: z
    .boolean()
    .default(true)
    .describe('Verify the server certificate; turn off only on a trusted network (prefer giving the ca instead)'),
  root: z
    .string()
    .trim()
    .min(1, 'root is required')
    .refine(noControlCharacters, 'root must not contain control characters')
    .refine((value) => !value.split('/').some((segment) => segment === '.' || segment === '..'), 'root must not contain . or .. segments')
    .describe('Directory on the server that holds the backups; absolute, or relative to the login directory. It must exist.'),
  allowSeparateTransferHost: z
    .boolean()
    .default(false)
    .describe('Connect data transfers to the address the server names in its passive-mode answer instead of the control host (needed only behind some load balancers)'),
  maxConnections: z.coerce
    .number()
    .int()
    .min(1)
    .max(10)
    .default(2)
    .describe('Control connections kept open at most; FTP runs one command at a time per connection, so concurrent calls queue for one'),
  timeoutSeconds: z.coerce
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(60)
    .describe('A connection idle this long (no answer, no transfer progress) is dropped and the operation fails'),
});

/** Parsed config of {@link ftpStorageConfig}. */
export type FtpStorageConfig = z.output<typeof ftpStorageConfig>;
