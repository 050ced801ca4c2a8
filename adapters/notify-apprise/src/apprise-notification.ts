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
import type { AppriseConfig } from './config.js';
import { deliver, type Delivery } from './internal/http.js';
import { renderAppriseMessage, type AppriseMessage } from './internal/render.js';

/**
 * Apprise answers 200 when every service was notified, 204 when there was nothing to notify (no URLs, no saved
 * configuration) and 424 when a service failed: only a 2xx other than 204 means the message went out.
 */
const isNotified = (status: number) => status >= 200 && status < 300 && status !== 204;

/** The Apprise channel: one `POST /notify/{key}` (stateful) or `POST /notify/` with URLs (stateless) per notification. */
@injectable()
export class AppriseChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: AppriseConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.notify(() => this.message(message, context), NOTIFICATION_SEND_TIMEOUT_MS);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'apprise notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.notify(() => this.message('This is a test notification from Holdfast.', { title: 'Holdfast test notification' }), NOTIFICATION_TEST_TIMEOUT_MS);
    if (outcome.ok) return { success: true, message: `Apprise notified its services (HTTP ${outcome.status})` };
    if (outcome.status === 204) return { success: false, message: 'Apprise test failed: the server had nothing to notify (no saved configuration for the key, or no valid URLs)' };
    if (outcome.status === 424) return { success: false, message: 'Apprise test failed: one or more services could not be notified (see the Apprise server log)' };
    return { success: false, message: `Apprise test failed: ${outcome.reason}` };
  }

  private message(message: string, context: NotificationContext): AppriseMessage {
    return renderAppriseMessage(message, context, { tag: this.config.tag, urls: this.config.key === undefined ? this.config.urls : undefined });
  }

  /** Timeouts equal the kernel's bounds, so a hanging server is released exactly when the kernel gives up. */
  private async notify(build: () => AppriseMessage, timeoutMs: number): Promise<Delivery> {
    try {
      const base = this.config.serverUrl.replace(/\/+$/, '');
      const url = this.config.key === undefined ? `${base}/notify/` : `${base}/notify/${encodeURIComponent(this.config.key)}`;
      return await deliver(
        { url, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(build()), timeoutMs },
        isNotified,
      );
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
