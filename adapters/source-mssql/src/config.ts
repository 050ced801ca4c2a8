import { localPath, secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** How the `.bak` written on the server is reached over SSH/SFTP; the login secrets are top-level secret fields. */
export const sshBlock = z.object({
  host: z.string().min(1).optional().describe('SSH host holding backupDirectory; default: the SQL Server host'),
  ...sshBlockFields(),
  directory: z
    .string()
    .min(1)
    .optional()
    .describe('backupDirectory as the SFTP server sees it (a Docker volume path, /C:/Backups on Windows); default: backupDirectory'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('SSH handshake timeout in seconds'),
});

/** Connection settings of a SQL Server instance and where its backup files are written and picked up. */
export const mssqlSourceConfig = z
  .object({
    // host, port and user say where the password goes: a stored secret is reused only while they stay.
    host: secretTarget(z.string().min(1).describe('SQL Server host name or address')),
    port: secretTarget(z.coerce.number().int().min(1).max(65535).default(1433).describe('TCP port of the instance')),
    user: secretTarget(z.string().min(1).describe('SQL login; needs the BACKUP DATABASE permission (db_backupoperator) and dbcreator for restores')),
    password: secret(z.string().optional().describe('Password of the SQL login')),
    database: z.string().min(1).optional().describe('Database backed up when a job names none (default: the only user database)'),
    encrypt: z.boolean().default(true).describe('Encrypt the TDS connection (TLS)'),
    trustServerCertificate: z.boolean().default(false).describe('Accept a self-signed server certificate (only with a trusted network)'),
    backupDirectory: z
      .string()
      .min(1)
      .describe('Directory on the SQL Server host where BACKUP writes the .bak (as the server sees it, e.g. /var/opt/mssql/backup or D:\\Backups)'),
    // Holdfast writes (restore uploads) and deletes there: the operator's local path policy applies as to a destination.
    sharedDirectory: localPath(
      z
        .string()
        .min(1)
        .optional()
        .describe('The same directory mounted on the Holdfast host (SMB/NFS/bind mount, inside HOLDFAST_LOCAL_ROOTS); used instead of SSH when set'),
      'storage',
    ),
    ssh: secretTarget(sshBlock.optional().describe('Fetch the .bak over SFTP from this host instead of a shared directory')),
    ...sshLoginSecretFields,
    copyOnly: z.boolean().default(true).describe('BACKUP ... WITH COPY_ONLY: leaves the differential base and log chain of other backup tools alone'),
    compression: z.boolean().default(false).describe('BACKUP ... WITH COMPRESSION (not available on Express edition)'),
    restoreDataDirectory: z.string().min(1).optional().describe('Where restored data files go; default: the instance default data path'),
    restoreLogDirectory: z.string().min(1).optional().describe('Where restored log files go; default: the instance default log path'),
    replaceExisting: z
      .boolean()
      .default(false)
      .describe('Let a restore overwrite an existing database (WITH REPLACE, after SET SINGLE_USER WITH ROLLBACK IMMEDIATE)'),
    connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(15).describe('Connect timeout in seconds'),
    commandTimeoutSeconds: z.coerce
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(0)
      .describe('Longest BACKUP or RESTORE statement in seconds; 0 waits for ever (the run can still be cancelled)'),
  })
  .refine((config) => Boolean(config.ssh) !== Boolean(config.sharedDirectory), {
    message: 'set exactly one of ssh (fetch the .bak over SFTP) or sharedDirectory (the backup directory mounted here)',
    path: ['sharedDirectory'],
  });

/** Parsed config of the SQL Server source. */
export type MssqlSourceConfig = z.output<typeof mssqlSourceConfig>;
