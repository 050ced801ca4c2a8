import { secret, z } from '@holdfast/sdk';

/** Telegram's parse modes (Bot API "Formatting options"). */
export const PARSE_MODES = ['MarkdownV2', 'HTML', 'Markdown'] as const;

/** Config of the bot chat channel (SPEC "Notification channel configurations"). */
export const telegramConfig = z.object({
  botToken: secret(z.string().min(1))
    .optional()
    .describe('Bot token from @BotFather. A TOKEN credential profile wins over this field. Stored encrypted.'),
  chatId: z
    .string()
    .trim()
    .min(1)
    .describe('Chat to post to: a numeric id (groups and channels start with -100) or @channelusername.'),
  parseMode: z.enum(PARSE_MODES).default('HTML').describe('Formatting of the message; every value is escaped for the chosen mode.'),
  disableNotification: z.boolean().default(false).describe('Deliver silently (no sound on the recipients\' devices).'),
  messageThreadId: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Topic (message thread) of a forum supergroup to post into.'),
  apiUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default('https://api.telegram.org')
    .describe('Bot API server; change only for a self-hosted telegram-bot-api server.'),
});

/** Parsed config of {@link telegramConfig}. */
export type TelegramConfig = z.output<typeof telegramConfig>;

/** One of {@link PARSE_MODES}. */
export type ParseMode = (typeof PARSE_MODES)[number];
