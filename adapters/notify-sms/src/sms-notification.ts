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
import type { SmsConfig } from './config.js';
import { resolveToken } from './internal/credentials.js';
import { deliver, type Delivery } from './internal/http.js';
import { renderSmsBody } from './internal/render.js';

/** SPEC: HTTP 200 and 201 both count as success (Twilio answers 201 Created). */
const isAccepted = (status: number) => status === 200 || status === 201;

/** The SMS channel: one Twilio "Create a Message" request per notification. */
@injectable()
export class SmsChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: SmsConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.createMessage(() => renderSmsBody(message, context), NOTIFICATION_SEND_TIMEOUT_MS);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'sms notification failed');
    return outcome.ok;
  }

  /** Sends a real (short) SMS: only that proves the sending number may reach the receiving one. */
  async test(): Promise<ChannelTestResult> {
    const outcome = await this.createMessage(
      () => renderSmsBody('This is a test notification from Holdfast.', { title: 'Holdfast test' }),
      NOTIFICATION_TEST_TIMEOUT_MS,
    );
    if (outcome.ok) return { success: true, message: `Twilio accepted the test SMS to ${this.config.to} (HTTP ${outcome.status})` };
    return { success: false, message: `SMS test failed: ${outcome.reason}` };
  }

  /** Timeouts equal the kernel's bounds, so a hanging host is released exactly when the kernel gives up. */
  private async createMessage(body: () => string, timeoutMs: number): Promise<Delivery> {
    try {
      const token = resolveToken(this.context, this.config.authToken, 'authToken');
      if (!token.ok) return token;
      const base = this.config.apiUrl.replace(/\/+$/, '');
      const form = new URLSearchParams({ To: this.config.to, From: this.config.from, Body: body() });
      return await deliver(
        {
          url: `${base}/2010-04-01/Accounts/${encodeURIComponent(this.config.accountSid)}/Messages.json`,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${this.config.accountSid}:${token.value}`).toString('base64')}`,
          },
          body: form.toString(),
          timeoutMs,
        },
        isAccepted,
      );
    } catch (error) {
      // Only the error's name: its message could quote the request.
      return { ok: false, reason: `cannot build the request (${(error as Error | null)?.name ?? 'unknown error'})` };
    }
  }
}
