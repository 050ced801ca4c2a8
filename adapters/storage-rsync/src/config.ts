import { secret, z } from '@holdfast/sdk';

/** Config of an rsync destination: over SSH (`mode: "ssh"`) or to an rsync daemon (`mode: "daemon"`, rsync://). */
export const rsyncStorageConfig = z.object({
  mode: z
    .enum(['ssh', 'daemon'])
    .default('ssh')
    .describe('"ssh": a shell account with rsync (streamed, no local copy); "daemon": an rsync daemon module (rsync://, spooled through a local file)'),
  host: z.string().trim().min(1, 'host is required').describe('Server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).optional().describe('Port; defaults to 22 (ssh) or 873 (daemon)'),
  username: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('Login name (SSH user or rsync daemon "auth users" name); falls back to the credential profile'),
  password: secret(z.string().optional().describe('SSH password, or the rsync daemon password (passed to rsync as RSYNC_PASSWORD, never on the command line)')),
  privateKey: secret(z.string().optional().describe('SSH private key in PEM or OpenSSH format (the key text, not a path); ssh mode')),
  passphrase: secret(z.string().optional().describe('Passphrase of the private key, when it is encrypted; ssh mode')),
  hostKeySha256: z
    .string()
    .trim()
    .regex(/^(SHA256:)?[A-Za-z0-9+/]{43}=?$/, 'hostKeySha256 must be an OpenSSH SHA256 fingerprint (SHA256:<43 base64 characters>)')
    .optional()
    .describe('Pins the SSH host key (as printed by ssh-keygen -lf); a different key fails with an AUTH error; ssh mode'),
  module: z
    .string()
    .trim()
    .regex(/^[^/\s][^/]*$/, 'module is a daemon module name, without "/"')
    .optional()
    .describe('rsync daemon module (the [name] section of rsyncd.conf); required in daemon mode'),
  root: z
    .string()
    .trim()
    .default('')
    .refine((value) => !value.split('/').some((segment) => segment === '..'), { message: 'root must not contain ".." segments' })
    .describe('Folder holding the backups: on SSH an absolute path or one relative to the login folder; on a daemon a path inside the module ("" = the module root). It must exist.'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(20).describe('Connect and handshake timeout in seconds'),
  ioTimeoutSeconds: z.coerce.number().int().min(5).max(3600).default(300).describe('A transfer that moves no data for this long fails (rsync --timeout, SSH keepalives)'),
  spoolDir: z
    .string()
    .trim()
    .optional()
    .describe('Daemon mode only: local folder for the spool file of each transfer (default: the system temp folder); needs free space for the largest backup'),
});

/** Parsed config of {@link rsyncStorageConfig}. */
export type RsyncStorageConfig = z.output<typeof rsyncStorageConfig>;
