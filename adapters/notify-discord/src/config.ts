import { secret, z } from '@holdfast/sdk';

/** Config of the chat webhook with embeds (SPEC "Notification channel configurations"). */
export const discordConfig = z.object({
  webhookUrl: secret(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }))
    .optional()
    .describe('Discord webhook URL (it embeds the webhook token). A WEBHOOK credential profile wins over this field. Stored encrypted.'),
  username: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .refine((name) => !/discord|clyde/i.test(name), 'Discord rejects usernames containing "discord" or "clyde"')
    .default('Holdfast')
    .describe('Name the message is posted under (1 to 80 characters).'),
  avatarUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional()
    .describe('URL of an image used as the avatar of the message.'),
});

/** Parsed config of {@link discordConfig}. */
export type DiscordConfig = z.output<typeof discordConfig>;
