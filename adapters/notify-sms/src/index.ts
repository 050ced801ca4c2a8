import { defineNotificationAdapter } from '@holdfast/sdk';
import { smsConfig } from './config.js';
import { SmsChannel } from './sms-notification.js';

export { smsConfig, type SmsConfig } from './config.js';
export { SmsChannel } from './sms-notification.js';
export { MAX_BODY, MAX_FIELDS, renderSmsBody } from './internal/render.js';

/** The `sms` notification channel: text messages through the Twilio Messages API. */
export default defineNotificationAdapter({
  id: 'sms',
  displayName: 'SMS (Twilio)',
  description: 'Sends each notification as an SMS through the Twilio Messages API (at most 4 fields per message).',
  configSchema: smsConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['TOKEN'],
  implementation: SmsChannel,
});
