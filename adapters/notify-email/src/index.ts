import { defineNotificationAdapter } from '@holdfast/sdk';
import { emailConfig } from './config.js';
import { EmailChannel } from './email-notification.js';

export { emailConfig, type EmailConfig } from './config.js';
export { EmailChannel } from './email-notification.js';
export { renderEmail, SUBJECT_PREFIX, type RenderedEmail } from './internal/render.js';

/** The `email` notification channel: SMTP with plain, SSL or STARTTLS connections. */
export default defineNotificationAdapter({
  id: 'email',
  displayName: 'Email (SMTP)',
  description: 'Sends each notification as an email with an HTML and a plain-text body.',
  configSchema: emailConfig,
  capabilities: { fields: true, emailRecipient: true },
  implementation: EmailChannel,
});
