import { secret, z } from '@holdfast/sdk';

/** Config of the self-hosted push channel (SPEC "Notification channel configurations"). */
export const gotifyConfig = z.object({
  serverUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .describe('Base URL of the Gotify server, e.g. https://gotify.example.com (a path prefix behind a proxy is kept).'),
  appToken: secret(z.string().min(1))
    .optional()
    .describe('Application token. Used only when no TOKEN credential profile is assigned; the profile wins. Stored encrypted.'),
  priority: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(5)
    .describe('Message priority 0 to 10. Failures are raised to at least 8; connection tests are sent at 1.'),
});

/** Parsed config of {@link gotifyConfig}. */
export type GotifyConfig = z.output<typeof gotifyConfig>;
