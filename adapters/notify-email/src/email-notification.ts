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
import type { EmailConfig } from './config.js';
import { renderEmail } from './internal/render.js';
import { sendEmail } from './internal/smtp.js';

/**
 * SPEC "Limits": a connection test ends after 10 s. Each SMTP step may take half of it and the overall deadline is
 * the whole bound (never shorter), so a silent server fails the test at 10 s, with the socket closed.
 */
const TEST_STEP_SECONDS = NOTIFICATION_TEST_TIMEOUT_MS / 1000 / 2;

/** The email channel: one SMTP delivery per notification, with an HTML and a plain-text body. */
@injectable()
export class EmailChannel implements NotificationChannel {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: EmailConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async send(message: string, context: NotificationContext = {}): Promise<boolean> {
    const outcome = await sendEmail(this.config, this.config.to, renderEmail(message, context), this.config.timeoutSeconds);
    if (!outcome.ok) this.context.logger.warn({ reason: outcome.reason }, 'email notification failed');
    return outcome.ok;
  }

  /** Sends a real test message, so a passing test proves the whole path to the mailbox's server. */
  async test(): Promise<ChannelTestResult> {
    const email = renderEmail('This is a test notification from Holdfast. If you can read it, the email channel works.', {
      title: 'Test notification',
      eventType: 'test',
      success: true,
    });
    const outcome = await sendEmail(this.config, this.config.to, email, TEST_STEP_SECONDS);
    if (outcome.ok) return { success: true, message: `Test email accepted by ${this.config.host}:${this.config.port}` };
    return { success: false, message: `Email test failed: ${outcome.reason}` };
  }
}
