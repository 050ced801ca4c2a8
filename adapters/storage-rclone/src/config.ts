import { secret, z } from '@holdfast/sdk';
import { flagProblem } from './internal/flags.js';

/** Inline remote parameters that carry secrets; they would land in the process list, so they are refused. */
const INLINE_SECRET = /[,:](?:[a-z0-9_]*(?:pass|password|secret|token|key|sas_url|credentials|client_secret))\s*=/i;

function environmentProblem(text: string): string | undefined {
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = line.slice(0, line.indexOf('='));
    if (!line.includes('=') || !/^RCLONE_[A-Z0-9_]+$/.test(name)) return `line ${index + 1}: expected RCLONE_NAME=value`;
    if (name === 'RCLONE_CONFIG' || name.endsWith('_COMMAND')) return `line ${index + 1}: ${name} may not be set here`;
  }
  return undefined;
}

/** Config of an rclone destination: a remote path, with its credentials in a config file section or environment. */
export const rcloneStorageConfig = z.object({
  remote: z
    .string()
    .trim()
    .regex(/^[^\s-][^\n]*:/, 'remote must look like "name:path" or ":backend,option=value:path"')
    .refine((value) => !INLINE_SECRET.test(value), {
      message: 'remote must not carry secrets inline (they would show in the process list): put them in configFile or environment',
    })
    .describe('rclone remote and folder holding the backups, e.g. "mys3:bucket/holdfast", ":local:/srv/backups" or ":webdav,url=\'https://dav.example\':backups"'),
  configFile: secret(
    z
      .string()
      .optional()
      .describe('rclone.conf content defining the remote (as `rclone config show <name>` prints it); written to a private 0600 file while the destination is in use'),
  ),
  environment: secret(
    z
      .string()
      .optional()
      .refine((value) => value === undefined || environmentProblem(value) === undefined, {
        message: 'environment takes one RCLONE_NAME=value per line (not RCLONE_CONFIG, not *_COMMAND)',
      })
      .describe('Extra RCLONE_* environment variables, one NAME=value per line (e.g. RCLONE_WEBDAV_PASS or RCLONE_CONFIG_PASS)'),
  ),
  flags: z
    .array(z.string().trim().refine((flag) => flagProblem(flag) === undefined, { message: 'flag is not on the allow-list (see the README)' }))
    .max(32)
    .default([])
    .describe('Extra rclone flags from an allow-list of tuning flags, as "--name" or "--name=value" (e.g. "--bwlimit=10M", "--s3-chunk-size=64M")'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(30).describe('Connect timeout of each rclone network call, in seconds'),
});

/** Parsed config of {@link rcloneStorageConfig}. */
export type RcloneStorageConfig = z.output<typeof rcloneStorageConfig>;
