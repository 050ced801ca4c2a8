import { secret, z } from '@holdfast/sdk';

/** Config of the topic push channel (SPEC "Notification channel configurations"). */
export const ntfyConfig = z.object({
  serverUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default('https://ntfy.sh')
    .describe('Base URL of the ntfy server; the public server https://ntfy.sh by default.'),
  topic: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[-_A-Za-z0-9]+$/, 'may contain only letters, digits, "-" and "_" (ntfy topic rules)')
    .describe('Topic to publish to. On a public server the topic name is the only protection: pick a hard-to-guess one.'),
  accessToken: secret(z.string().min(1))
    .optional()
    .describe('Access token (tk_...) for protected topics. A TOKEN credential profile wins over this field. Stored encrypted.'),
  priority: z
    .number()
    .int()
    .min(1)
    .max(5)
    .default(3)
    .describe('Message priority 1 (min) to 5 (max). Failures are escalated to 5; connection tests are sent at 2.'),
});

/** Parsed config of {@link ntfyConfig}. */
export type NtfyConfig = z.output<typeof ntfyConfig>;
