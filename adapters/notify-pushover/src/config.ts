import { secret, z } from '@holdfast/sdk';

/** Config of the Pushover channel (beyond SPEC; issue 14). */
export const pushoverConfig = z.object({
  appToken: secret(z.string().min(1))
    .optional()
    .describe('Application API token (pushover.net, Your Applications). A TOKEN credential profile wins over this field. Stored encrypted.'),
  userKey: secret(z.string().trim().regex(/^[A-Za-z0-9]{30}$/, 'must be a 30-character Pushover user or group key'))
    .describe('User or group key the messages go to. Stored encrypted.'),
  priority: z
    .number()
    .int()
    .min(-2)
    .max(2)
    .default(0)
    .describe('Priority -2 (silent) to 2 (emergency, repeated until acknowledged). Failures are raised to at least 1; tests are sent at -1.'),
  sound: z
    .string()
    .regex(/^[a-z0-9_]{1,32}$/, 'must be a Pushover sound name such as "siren"')
    .optional()
    .describe('Sound name (e.g. pushover, siren, none); the user\'s default when empty.'),
  device: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,25}(,[A-Za-z0-9_-]{1,25})*$/, 'must be device names separated by commas')
    .optional()
    .describe('Send only to these devices (comma-separated names); all devices when empty.'),
  apiUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default('https://api.pushover.net')
    .describe('Pushover API base URL; change only for a compatible gateway.'),
});

/** Parsed config of {@link pushoverConfig}. */
export type PushoverConfig = z.output<typeof pushoverConfig>;
