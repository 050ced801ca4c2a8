import { defineNotificationAdapter } from '@holdfast/sdk';
import { webhookConfig } from './config.js';
import { GenericWebhookChannel } from './generic-webhook-notification.js';

export { webhookConfig, type WebhookConfig } from './config.js';
export { GenericWebhookChannel } from './generic-webhook-notification.js';
export { renderTemplate, defaultPayload, TEMPLATE_VARIABLES, type TemplateValues } from './internal/template.js';

/** The `generic-webhook` notification channel: an HTTP request to any URL, with an optional JSON template. */
export default defineNotificationAdapter({
  id: 'generic-webhook',
  displayName: 'Generic webhook',
  description: 'Sends each notification as an HTTP request with a JSON body built from an optional template.',
  configSchema: webhookConfig,
  capabilities: { fields: true, emailRecipient: false },
  implementation: GenericWebhookChannel,
});
