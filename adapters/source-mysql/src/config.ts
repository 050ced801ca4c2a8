import { secret, z } from '@holdfast/sdk';

/** Connection settings of a MySQL or MariaDB server; the dump tools run on the Holdfast host. */
export const mysqlSourceConfig = z.object({
  host: z.string().min(1).default('127.0.0.1').describe('Server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).default(3306).describe('Server port'),
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
  binDirectory: z
    .string()
    .optional()
    .describe('Directory holding mariadb-dump/mysqldump and mariadb/mysql; default: found on PATH'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
});

/** Parsed config of the MySQL/MariaDB source. */
export type MysqlSourceConfig = z.output<typeof mysqlSourceConfig>;
