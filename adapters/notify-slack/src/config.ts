import { secret, z } from '@holdfast/sdk';

/** Config of the chat webhook with block layout (SPEC "Notification channel configurations"). */
export const slackConfig = z.object({
  webhookUrl: secret(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }))
    .optional()
    .describe('Slack incoming webhook URL (it embeds the webhook token). A WEBHOOK credential profile wins over this field. Stored encrypted.'),
  channel: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .optional()
    .describe('Channel override such as #backups (honoured by legacy webhooks only; app webhooks post to their own channel).'),
  username: z.string().trim().min(1).max(80).default('Holdfast').describe('Name the message is posted under (legacy webhooks).'),
  iconEmoji: z
    .string()
    .regex(/^:[a-z0-9_+'-]+:$/, 'must be an emoji code such as :floppy_disk:')
    .optional()
    .describe('Emoji used as the avatar, e.g. :floppy_disk: (legacy webhooks).'),
});

/** Parsed config of {@link slackConfig}. */
export type SlackConfig = z.output<typeof slackConfig>;
