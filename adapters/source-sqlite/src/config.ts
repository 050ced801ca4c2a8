import { z } from '@holdfast/sdk';

/** Where the SQLite database file lives and how the sqlite3 CLI is run on it. */
export const sqliteSourceConfig = z.object({
  path: z.string().min(1).describe('Absolute path of the SQLite database file on the Holdfast host'),
  binDirectory: z.string().optional().describe('Directory holding the sqlite3 CLI; default: found on PATH'),
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
    .describe('Where the backup copy is staged before it streams (needs the database size free); default: the OS temp directory'),
  keepPreviousFile: z
    .boolean()
    .default(false)
    .describe('After a restore, keep the replaced file as <path>.previous instead of deleting it once the new one is verified'),
});

/** Parsed config of the SQLite source. */
export type SqliteSourceConfig = z.output<typeof sqliteSourceConfig>;
