import { secret, z } from '@holdfast/sdk';

/** Connection settings of a PostgreSQL server; the dump tools run on the Holdfast host. */
export const postgresSourceConfig = z.object({
  host: z.string().min(1).default('127.0.0.1').describe('Server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).default(5432).describe('Server port'),
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
  binDirectory: z
    .string()
    .optional()
    .describe('Directory holding pg_dump and pg_restore; default: found on PATH'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
});

/** Parsed config of the PostgreSQL source. */
export type PostgresSourceConfig = z.output<typeof postgresSourceConfig>;
