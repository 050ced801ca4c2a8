import {
  NOTIFICATION_SEND_TIMEOUT_MS,
  NOTIFICATION_TEST_TIMEOUT_MS,
  TOKENS,
  inject,
  injectable,
  resolveWebhookUrl,
  type AdapterContext,
  type ChannelTestResult,
  type NotificationChannel,
  type NotificationContext,
} from '@holdfast/sdk';
import type { SlackConfig } from './config.js';
import { deliver, type Delivery } from './internal/http.js';
import { renderSlackPayload, type SlackPayload } from './internal/render.js';

/** The chat webhook with block layout: one incoming-webhook request per notification, laid out with Block Kit. */
@injectable()
export class SlackChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: SlackConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.post(() => this.payload(message, context), NOTIFICATION_SEND_TIMEOUT_MS);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'slack notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.post(
      () => this.payload('This is a test notification from Holdfast.', { title: 'Holdfast test notification', eventType: 'test' }),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `Slack accepted the test message (HTTP ${outcome.status})` };
    return { success: false, message: `Slack test failed: ${outcome.reason}` };
  }

  private payload(message: string, context: NotificationContext): SlackPayload {
    return renderSlackPayload(message, context, { username: this.config.username, channel: this.config.channel, iconEmoji: this.config.iconEmoji });
  }

  /** Timeouts equal the kernel's bounds, so a hanging host is released exactly when the kernel gives up. */
  private async post(build: () => SlackPayload, timeoutMs: number): Promise<Delivery> {
    try {
      const url = resolveWebhookUrl(this.context, this.config.webhookUrl, 'webhookUrl');
      if (!url.ok) return url;
      return await deliver({ url: url.value, headers: { 'content-type': 'application/json' }, body: JSON.stringify(build()), timeoutMs });
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
