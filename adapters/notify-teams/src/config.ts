import { secret, z } from '@holdfast/sdk';

/** Config of the workflow webhook with adaptive cards (SPEC "Notification channel configurations"). */
export const teamsConfig = z.object({
  webhookUrl: secret(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }))
    .optional()
    .describe('Teams Workflows webhook URL (its sig parameter is the secret). A WEBHOOK credential profile wins over this field. Stored encrypted.'),
});

/** Parsed config of {@link teamsConfig}. */
export type TeamsConfig = z.output<typeof teamsConfig>;
