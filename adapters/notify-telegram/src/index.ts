import { defineNotificationAdapter } from '@holdfast/sdk';
import { telegramConfig } from './config.js';
import { TelegramChannel } from './telegram-notification.js';

export { PARSE_MODES, telegramConfig, type ParseMode, type TelegramConfig } from './config.js';
export { TelegramChannel, type SendMessageBody } from './telegram-notification.js';
export { escapeHtml, escapeMarkdown, escapeMarkdownV2, formatterFor } from './internal/escape.js';
export { MAX_TEXT, renderTelegramText } from './internal/render.js';

/** The `telegram` notification channel: bot messages to a chat, group, channel or forum topic. */
export default defineNotificationAdapter({
  id: 'telegram',
  displayName: 'Telegram',
  description: 'Sends each notification as a Telegram bot message, escaped for the chosen parse mode.',
  configSchema: telegramConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['TOKEN'],
  implementation: TelegramChannel,
});
