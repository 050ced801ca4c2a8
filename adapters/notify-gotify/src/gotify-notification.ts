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
import type { GotifyConfig } from './config.js';
import { resolveToken } from './internal/credentials.js';
import { deliver, type Delivery } from './internal/http.js';
import { TEST_PRIORITY, priorityFor, renderGotifyMessage, type GotifyMessage } from './internal/render.js';

/** The self-hosted push channel: one `POST /message` per notification, the token in the `X-Gotify-Key` header. */
@injectable()
export class GotifyChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: GotifyConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.publish(
      () => renderGotifyMessage(message, context, priorityFor(this.config.priority, context)),
      NOTIFICATION_SEND_TIMEOUT_MS,
    );
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'gotify notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.publish(
      () => renderGotifyMessage('This is a test notification from Holdfast.', { title: 'Holdfast test notification', eventType: 'test' }, TEST_PRIORITY),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `Gotify accepted the test message (HTTP ${outcome.status})` };
    return { success: false, message: `Gotify test failed: ${outcome.reason}` };
  }

  /** Timeouts equal the kernel's bounds, so a hanging server is released exactly when the kernel gives up. */
  private async publish(build: () => GotifyMessage, timeoutMs: number): Promise<Delivery> {
    try {
      const token = resolveToken(this.context, this.config.appToken, 'appToken');
      if (!token.ok) return token;
      return await deliver({
        url: `${this.config.serverUrl.replace(/\/+$/, '')}/message`,
        headers: { 'content-type': 'application/json', 'x-gotify-key': token.value },
        body: JSON.stringify(build()),
        timeoutMs,
      });
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
