import {
  NOTIFICATION_TEST_TIMEOUT_MS,
  TOKENS,
  inject,
  injectable,
  type AdapterContext,
  type ChannelTestResult,
  type NotificationChannel,
  type NotificationContext,
} from '@holdfast/sdk';
import type { WebhookConfig } from './config.js';
import { deliver, type Delivery } from './internal/deliver.js';
import { parseCustomHeaders } from './internal/headers.js';
import { defaultPayload, renderTemplate, type TemplateValues } from './internal/template.js';

/**
 * SPEC "Limits": a connection test ends after 10 s. The request's own timeout is that bound (never shorter), so
 * the socket is released exactly when the kernel gives up.
 */
const TEST_TIMEOUT_SECONDS = NOTIFICATION_TEST_TIMEOUT_MS / 1000;

/** Colours used when the context brings none: green success, red failure, blue otherwise. */
function defaultColor(success: boolean | undefined): string {
  if (success === undefined) return '#3b82f6';
  return success ? '#22c55e' : '#ef4444';
}

/** The generic webhook channel: one HTTP request per notification, body from a template or a default JSON. */
@injectable()
export class GenericWebhookChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: WebhookConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await this.post(message, context, this.config.timeoutSeconds);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason, status: outcome.status }, 'generic webhook notification failed');
    return outcome.ok;
  }

  async test(): Promise<ChannelTestResult> {
    const outcome = await this.post(
      'This is a test notification from Holdfast.',
      { title: 'Holdfast test notification', eventType: 'test', success: true },
      TEST_TIMEOUT_SECONDS,
    );
    if (outcome.ok) return { success: true, message: `Webhook answered HTTP ${outcome.status} ${outcome.statusText}`.trim() };
    return { success: false, message: `Webhook test failed: ${outcome.reason}` };
  }

  private async post(message: string, context: NotificationContext, timeoutSeconds: number): Promise<Delivery> {
    try {
      return await deliver({
        url: this.config.webhookUrl,
        method: this.config.method,
        headers: this.headers(),
        body: this.body(message, context),
        timeoutMs: timeoutSeconds * 1000,
      });
    } catch (error) {
      // Rendering failures (a template saved before validation existed): a value, never a throw.
      return { ok: false, reason: `cannot build the request (${(error as Error).message})` };
    }
  }

  private body(message: string, context: NotificationContext): string {
    const values: TemplateValues = {
      title: context.title ?? 'Holdfast notification',
      message,
      success: context.success ?? null,
      color: context.color ?? defaultColor(context.success),
      timestamp: new Date().toISOString(),
      eventType: context.eventType ?? 'notification',
      fields: context.fields ?? [],
    };
    const template = this.config.payloadTemplate?.trim();
    return template ? renderTemplate(template, values) : defaultPayload(values);
  }

  private headers(): Headers {
    const headers = new Headers({ 'user-agent': 'Holdfast' });
    const custom = parseCustomHeaders(this.config.customHeaders);
    if (custom.ok) for (const [name, value] of custom.headers) headers.set(name, value);
    // The dedicated fields win over a custom line naming the same header.
    headers.set('content-type', this.config.contentType);
    if (this.config.authHeader) headers.set('authorization', this.config.authHeader);
    return headers;
  }
}
