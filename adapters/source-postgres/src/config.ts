import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** Where the tools run in SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host where the PostgreSQL tools run'),
  ...sshBlockFields(),
});

/** Connection settings of a PostgreSQL server; the dump tools run on the Holdfast host, or over SSH when `ssh` is set. */
export const postgresSourceConfig = z
  .object({
    mode: z
      .enum(['logical', 'physical'])
      .default('logical')
      .describe(
        'logical: pg_dump of each database. physical: base backups of the whole cluster over the replication protocol plus continuous WAL archiving, for point-in-time recovery; needs the REPLICATION privilege and a pg_hba.conf replication line',
      ),
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
    restoreClean: z
      .boolean()
      .default(true)
      .describe('Restore: replace the target database whole (restored into a staging database, swapped in on success); off merges into an existing target in one transaction'),
    restoreNoOwner: z
      .boolean()
      .default(true)
      .describe('Restore: objects belong to the restoring role and keep no grants (--no-owner --no-privileges); off restores owners and grants (the roles must exist: restore with globals)'),
    restoreCreateDatabase: z
      .boolean()
      .default(true)
      .describe('Restore: create a missing target database; off refuses a missing target before anything is written'),
    // Point-in-time recovery (issue 43, docs/pitr.md): physical mode always runs this check; the flag lets a logical
    // source find out beforehand whether switching to physical would work.
    checkReplication: z.boolean().default(false).meta({
      advanced: true,
      description:
        'Test connection also checks what point-in-time recovery needs: wal_level, WAL senders and slots, the REPLICATION privilege and the pg_hba.conf replication line (always checked in physical mode)',
    }),
    walFlushIntervalSeconds: z.coerce.number().int().min(1).max(3600).default(10).meta({
      advanced: true,
      description:
        'Physical mode: how often the WAL segment being written is archived as a partial segment, in seconds (the recovery point is about this old)',
    }),
    ssh: secretTarget(sshBlock.optional().describe('Run pg_dump, pg_restore and psql on this host over SSH instead of on the Holdfast host')),
    ...sshLoginSecretFields,
  })
  // pg_basebackup and pg_receivewal run on the Holdfast host and keep a spool there; over SSH they would not.
  .refine((config) => config.mode !== 'physical' || config.ssh === undefined, {
    message: 'mode "physical" cannot be combined with ssh: base backups and WAL streaming connect from the Holdfast host; remove the ssh block or use mode "logical"',
    path: ['ssh'],
  });

/** Parsed config of the PostgreSQL source. */
export type PostgresSourceConfig = z.output<typeof postgresSourceConfig>;
