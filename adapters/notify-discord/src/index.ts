import { defineNotificationAdapter } from '@holdfast/sdk';
import { discordConfig } from './config.js';
import { DiscordChannel } from './discord-notification.js';

export { discordConfig, type DiscordConfig } from './config.js';
export { DiscordChannel } from './discord-notification.js';
export { EMBED_LIMITS, colorAsInteger, renderDiscordPayload, type DiscordPayload } from './internal/render.js';

/** The `discord` notification channel: a webhook message with one embed (colour, fields, timestamp). */
export default defineNotificationAdapter({
  id: 'discord',
  displayName: 'Discord',
  description: 'Posts each notification to a Discord channel webhook as an embed with colour and fields.',
  configSchema: discordConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['WEBHOOK'],
  implementation: DiscordChannel,
});
