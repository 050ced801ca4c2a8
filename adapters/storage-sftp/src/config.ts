import { secret, z } from '@holdfast/sdk';

/** Config of an SFTP destination. Credentials may instead come from the `primary` credential profile. */
export const sftpStorageConfig = z.object({
  host: z.string().trim().min(1, 'host is required').describe('SFTP server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).default(22).describe('SSH port of the server'),
  username: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('Login name; falls back to the username of the assigned credential profile'),
  password: secret(z.string().optional().describe('Password (optional when a private key is given)')),
  privateKey: secret(
    z.string().optional().describe('Private key in PEM or OpenSSH format (the key text, not a path)'),
  ),
  passphrase: secret(z.string().optional().describe('Passphrase of the private key, when it is encrypted')),
  root: z
    .string()
    .trim()
    .min(1, 'root is required')
    .describe('Directory on the server that holds the backups; absolute, or relative to the login directory. It must exist.'),
  hostKeySha256: z
    .string()
    .trim()
    .regex(/^(SHA256:)?[A-Za-z0-9+/]{43}=?$/, 'hostKeySha256 must be an OpenSSH SHA256 fingerprint (SHA256:<43 base64 characters>)')
    .optional()
    .describe('Pins the server host key (as printed by ssh-keygen -lf); a different key fails with an AUTH error'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(20).describe('Connect and handshake timeout in seconds'),
  keepaliveSeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(600)
    .default(15)
    .describe('SSH keepalive interval in seconds; a connection that misses 3 keepalives is dropped and the operation fails'),
});

/** Parsed config of {@link sftpStorageConfig}. */
export type SftpStorageConfig = z.output<typeof sftpStorageConfig>;
