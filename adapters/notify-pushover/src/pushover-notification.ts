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
import type { PushoverConfig } from './config.js';
import { resolveToken } from './internal/credentials.js';
import { deliver, type Delivery } from './internal/http.js';
import { TEST_PRIORITY, priorityFor, renderPushoverForm } from './internal/render.js';

/** The Pushover channel: one Message API request per notification. */
@injectable()
export class PushoverChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: PushoverConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.push(() => this.form(message, context, priorityFor(this.config.priority, context)), NOTIFICATION_SEND_TIMEOUT_MS);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'pushover notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.push(
      () => this.form('This is a test notification from Holdfast.', { title: 'Holdfast test notification' }, TEST_PRIORITY),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `Pushover accepted the test message (HTTP ${outcome.status})` };
    return { success: false, message: `Pushover test failed: ${outcome.reason}` };
  }

  private form(message: string, context: NotificationContext, priority: number): Record<string, string> {
    return renderPushoverForm(message, context, { userKey: this.config.userKey, priority, sound: this.config.sound, device: this.config.device });
  }

  /** Timeouts equal the kernel's bounds, so a hanging host is released exactly when the kernel gives up. */
  private async push(build: () => Record<string, string>, timeoutMs: number): Promise<Delivery> {
    try {
      const token = resolveToken(this.context, this.config.appToken, 'appToken');
      if (!token.ok) return token;
      return await deliver({
        url: `${this.config.apiUrl.replace(/\/+$/, '')}/1/messages.json`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: token.value, ...build() }).toString(),
        timeoutMs,
      });
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
