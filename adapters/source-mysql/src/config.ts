import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** Where the tools run in SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host where the MySQL/MariaDB tools run'),
  ...sshBlockFields(),
});

/** Connection settings of a MySQL or MariaDB server; the tools run on the Holdfast host, or over SSH when `ssh` is set. */
export const mysqlSourceConfig = z
  .object({
    mode: z
      .enum(['logical', 'point-in-time'])
      .default('logical')
      .describe(
        'logical: mariadb-dump/mysqldump of the databases. point-in-time (in progress, docs/pitr.md): the binary log is also streamed continuously (mariadb-binlog, the way a replica reads it) for point-in-time recovery; needs log_bin, a non-zero server_id, REPLICATION SLAVE and REPLICATION CLIENT',
      ),
    // host, port, binDirectory and ssh say where the passwords go: a stored secret is reused only while they stay.
    host: secretTarget(z.string().min(1).default('127.0.0.1').describe('Server host name or address (as seen from where the tools run)')),
    port: secretTarget(z.coerce.number().int().min(1).max(65535).default(3306).describe('Server port')),
    user: z.string().min(1).describe('Account to connect as; needs SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES and, on MariaDB, SELECT on mysql.proc'),
    password: secret(z.string().optional().describe('Password of the account (empty for none)')),
    tls: z
      .enum(['disable', 'prefer', 'require', 'verify-full'])
      .default('prefer')
      .describe('TLS towards the server: disable, prefer (tools) / off (driver), require, or verify-full (checks the certificate)'),
    includeUsers: z
      .boolean()
      .default(false)
      .describe('Also dump accounts and grants (MariaDB only, through mariadb-dump --system=users)'),
    binDirectory: secretTarget(
      z.string().optional().describe('Directory holding mariadb-dump/mysqldump, mariadb/mysql and mariadb-binlog/mysqlbinlog, on the host where they run; default: PATH'),
    ),
    connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
    // Point-in-time mode (issue 44): the source's own interval, as source-postgres has walFlushIntervalSeconds.
    binlogFlushIntervalSeconds: z.coerce.number().int().min(1).max(3600).default(10).meta({
      advanced: true,
      description:
        'Point-in-time mode: how often the binary log file being written is archived as a partial file, in seconds (the recovery point is about this old)',
    }),
    // Point-in-time mode: which kind of base backup a backup takes (docs/pitr.md, "Physical base backups").
    baseMethod: z
      .enum(['logical', 'physical', 'auto'])
      .default('logical')
      .meta({
        advanced: true,
        description:
          'Point-in-time mode: the kind of base backup. logical: the consistent dump with its binary log coordinates. physical: mariadb-backup --stream=xbstream of the data files (MariaDB; Holdfast must run on the database host with read access to its data directory; refused otherwise). auto: physical when mariadb-backup is installed and the data directory is readable here, logical otherwise',
      }),
    ssh: secretTarget(sshBlock.optional().describe('Run the dump tool and the client on this host over SSH instead of on the Holdfast host')),
    ...sshLoginSecretFields,
  })
  // mariadb-binlog runs on the Holdfast host and keeps its spool there; over SSH it would not.
  .refine((config) => config.mode !== 'point-in-time' || config.ssh === undefined, {
    message: 'mode "point-in-time" cannot be combined with ssh: the binary log stream connects from the Holdfast host; remove the ssh block or use mode "logical"',
    path: ['ssh'],
  });

/** Parsed config of the MySQL/MariaDB source. */
export type MysqlSourceConfig = z.output<typeof mysqlSourceConfig>;
