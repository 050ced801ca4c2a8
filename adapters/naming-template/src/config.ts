import { z } from '@holdfast/sdk';

/** The pattern used when a job names no template. */
export const DEFAULT_NAMING_PATTERN = '{job_name}_yyyy-MM-dd_HH-mm-ss';

/** Options of the template naming strategy; every field has a default, so `{}` is a valid config. */
export const namingConfigSchema = z.strictObject({
  replacement: z
    .enum(['_', '-'], { error: 'must be "_" or "-"' })
    .default('_')
    .describe('Character that replaces unsafe characters (/ \\ < > : " | ? * and control characters) in names'),
  maxLength: z
    .int({ error: 'must be a whole number of bytes' })
    .min(32, { error: 'must be at least 32 bytes' })
    .max(255, { error: 'must be at most 255 bytes (the file-name limit of common file systems)' })
    .default(200)
    .describe('Longest rendered name in UTF-8 bytes; job and database names are shortened first (default 200)'),
});

/** Parsed naming options. */
export type NamingConfig = z.output<typeof namingConfigSchema>;
