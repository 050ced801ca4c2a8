import { secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** Where the file and the CLI are in SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host holding the database file and the sqlite3 CLI'),
  ...sshBlockFields(),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('SSH handshake timeout in seconds'),
});

/** Where the SQLite database file lives and how the sqlite3 CLI is run on it. */
export const sqliteSourceConfig = z.object({
  path: z.string().min(1).describe('Absolute path of the SQLite database file on the Holdfast host (on the SSH host in SSH mode)'),
  // binDirectory and ssh say where the SSH secrets go: a stored secret is reused only while they stay.
  binDirectory: secretTarget(z.string().optional().describe('Directory holding the sqlite3 CLI (on the SSH host in SSH mode); default: PATH')),
  busyTimeoutSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(30)
    .describe('How long the backup waits for a writer holding a lock before it fails'),
  tempDirectory: z
    .string()
    .optional()
    .describe('Where the backup copy is staged before it streams (needs the database size free; on the SSH host in SSH mode); default: the OS temp directory'),
  keepPreviousFile: z
    .boolean()
    .default(false)
    .describe('After a restore, keep the replaced file as <path>.previous instead of deleting it once the new one is verified'),
  ssh: secretTarget(sshBlock.optional().describe('Back up a file on this host over SSH (sqlite3 runs there) instead of on the Holdfast host')),
  ...sshLoginSecretFields,
});

/** Parsed config of the SQLite source. */
export type SqliteSourceConfig = z.output<typeof sqliteSourceConfig>;
