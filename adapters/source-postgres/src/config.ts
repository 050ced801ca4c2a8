import { secret, secretTarget, z } from '@holdfast/sdk';

/** Where the tools run in SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z
  .object({
    host: z.string().min(1).describe('SSH host where the PostgreSQL tools run'),
    port: z.coerce.number().int().min(1).max(65535).default(22).describe('SSH port'),
    username: z
      .string()
      .optional()
      .describe('SSH login; default: the username of the credential profile assigned under the role "ssh"'),
    hostKeySha256: z
      .string()
      .regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, 'expected an OpenSSH fingerprint like SHA256:AbC...')
      .describe('Pinned OpenSSH SHA256 fingerprint of the host key (see "SSH mode" in the README for the first-use flow)'),
  });

/** Connection settings of a PostgreSQL server; the dump tools run on the Holdfast host, or over SSH when `ssh` is set. */
export const postgresSourceConfig = z.object({
  // host, port, binDirectory and ssh say where the passwords go: a stored secret is reused only while they stay.
  host: secretTarget(z.string().min(1).default('127.0.0.1').describe('Server host name or address (as seen from where the tools run)')),
  port: secretTarget(z.coerce.number().int().min(1).max(65535).default(5432).describe('Server port')),
  user: z.string().min(1).describe('Role to connect as; needs read access to every database it dumps'),
  password: secret(z.string().optional().describe('Password of the role (empty for trust or peer authentication)')),
  maintenanceDatabase: z
    .string()
    .min(1)
    .default('postgres')
    .describe('Database used to list databases, detect the version and create restore targets'),
  sslMode: z
    .enum(['disable', 'prefer', 'require', 'verify-full'])
    .default('prefer')
    .describe('libpq sslmode used by the tools and the client'),
  binDirectory: secretTarget(
    z.string().optional().describe('Directory holding pg_dump, pg_restore (and psql in SSH mode), on the host where they run; default: PATH'),
  ),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
  includeGlobals: z
    .boolean()
    .default(false)
    .describe('Also back up the cluster globals (roles, tablespaces) with pg_dumpall --globals-only; reading role passwords needs a superuser'),
  globalsWithoutRolePasswords: z
    .boolean()
    .default(false)
    .describe('With includeGlobals: leave role passwords out (pg_dumpall --no-role-passwords; works without superuser)'),
  restoreGlobals: z.boolean().default(true).describe('Restore: replay the globals of a backup that has them before its databases'),
  restoreClean: z.boolean().default(true).describe('Restore: drop objects of the target database before recreating them (pg_restore --clean --if-exists)'),
  restoreNoOwner: z
    .boolean()
    .default(true)
    .describe('Restore: objects belong to the restoring role and keep no grants (--no-owner --no-privileges); off restores owners and grants (the roles must exist: restore with globals)'),
  restoreCreateDatabase: z
    .boolean()
    .default(true)
    .describe('Restore: create a missing target database; off refuses a missing target before anything is written'),
  ssh: secretTarget(sshBlock.optional().describe('Run pg_dump, pg_restore and psql on this host over SSH instead of on the Holdfast host')),
  sshPassword: secret(z.string().optional().describe('SSH password (default: from the "ssh" credential profile)')),
  sshPrivateKey: secret(z.string().optional().describe('SSH private key in OpenSSH/PEM format (default: from the "ssh" credential profile)')),
  sshPassphrase: secret(z.string().optional().describe('Passphrase of the SSH private key')),
});

/** Parsed config of the PostgreSQL source. */
export type PostgresSourceConfig = z.output<typeof postgresSourceConfig>;
