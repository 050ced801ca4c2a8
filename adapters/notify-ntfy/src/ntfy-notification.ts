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
import type { NtfyConfig } from './config.js';
import { deliver, type Delivery } from './internal/http.js';
import { TEST_PRIORITY, priorityFor, renderNtfyMessage, type NtfyMessage } from './internal/render.js';

/**
 * The topic push channel: one JSON publish to the server root per notification. JSON (not the header form) keeps
 * non-ASCII titles intact, since HTTP headers carry only Latin-1.
 */
@injectable()
export class NtfyChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: NtfyConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.publish(
      () => renderNtfyMessage(this.config.topic, message, context, priorityFor(this.config.priority, context)),
      NOTIFICATION_SEND_TIMEOUT_MS,
    );
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'ntfy notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.publish(
      () => renderNtfyMessage(this.config.topic, 'This is a test notification from Holdfast.', { title: 'Holdfast test notification', eventType: 'test' }, TEST_PRIORITY),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `ntfy accepted the test message on topic ${this.config.topic} (HTTP ${outcome.status})` };
    return { success: false, message: `ntfy test failed: ${outcome.reason}` };
  }

  /** A TOKEN profile wins over `accessToken`; with neither the topic is published without auth (public topics). */
  private token(): string | undefined {
    const primary = this.context.credentials?.primary;
    if (primary?.type === 'TOKEN' && typeof primary.token === 'string' && primary.token !== '') return primary.token;
    return this.config.accessToken;
  }

  /** Timeouts equal the kernel's bounds, so a hanging server is released exactly when the kernel gives up. */
  private async publish(build: () => NtfyMessage, timeoutMs: number): Promise<Delivery> {
    try {
      const token = this.token();
      return await deliver({
        url: `${this.config.serverUrl.replace(/\/+$/, '')}/`,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(build()),
        timeoutMs,
      });
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
