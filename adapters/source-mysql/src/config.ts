import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** Where the tools run in SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host where the MySQL/MariaDB tools run'),
  ...sshBlockFields(),
});

/** Connection settings of a MySQL or MariaDB server; the tools run on the Holdfast host, or over SSH when `ssh` is set. */
export const mysqlSourceConfig = z.object({
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
    z.string().optional().describe('Directory holding mariadb-dump/mysqldump and mariadb/mysql, on the host where they run; default: PATH'),
  ),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
  ssh: secretTarget(sshBlock.optional().describe('Run the dump tool and the client on this host over SSH instead of on the Holdfast host')),
  ...sshLoginSecretFields,
});

/** Parsed config of the MySQL/MariaDB source. */
export type MysqlSourceConfig = z.output<typeof mysqlSourceConfig>;
