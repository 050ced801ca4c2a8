import {
  NOTIFICATION_SEND_TIMEOUT_MS,
  NOTIFICATION_TEST_TIMEOUT_MS,
  TOKENS,
  inject,
  injectable,
  type AdapterContext,
  type ChannelTestResult,
  type NotificationChannel,
  type NotificationContext,
} from '@holdfast/sdk';
import type { TelegramConfig } from './config.js';
import { resolveToken } from './internal/credentials.js';
import { callBotApi, type Delivery } from './internal/http.js';
import { renderTelegramText } from './internal/render.js';

/** The body of `sendMessage` (Bot API). */
export interface SendMessageBody {
  chat_id: string;
  text: string;
  parse_mode: TelegramConfig['parseMode'];
  disable_notification: boolean;
  message_thread_id?: number;
  link_preview_options: { is_disabled: true };
}

/** The bot chat channel: one Bot API `sendMessage` per notification, formatted and escaped for the parse mode. */
@injectable()
export class TelegramChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: TelegramConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.sendMessage(() => renderTelegramText(message, context, this.config.parseMode), NOTIFICATION_SEND_TIMEOUT_MS);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'telegram notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.sendMessage(
      () => renderTelegramText('This is a test notification from Holdfast.', { title: 'Holdfast test notification', eventType: 'test' }, this.config.parseMode),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `Telegram delivered the test message to chat ${this.config.chatId}` };
    return { success: false, message: `Telegram test failed: ${outcome.reason}` };
  }

  /** Timeouts equal the kernel's bounds, so a hanging host is released exactly when the kernel gives up. */
  private async sendMessage(text: () => string, timeoutMs: number): Promise<Delivery> {
    try {
      const token = resolveToken(this.context, this.config.botToken, 'botToken');
      if (!token.ok) return token;
      const body: SendMessageBody = {
        chat_id: this.config.chatId,
        text: text(),
        parse_mode: this.config.parseMode,
        disable_notification: this.config.disableNotification,
        ...(this.config.messageThreadId === undefined ? {} : { message_thread_id: this.config.messageThreadId }),
        // Links in error texts must not unfurl into previews.
        link_preview_options: { is_disabled: true },
      };
      const base = this.config.apiUrl.replace(/\/+$/, '');
      return await callBotApi({ url: `${base}/bot${token.value}/sendMessage`, body: JSON.stringify(body), timeoutMs });
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
