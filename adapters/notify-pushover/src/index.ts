import { defineNotificationAdapter } from '@holdfast/sdk';
import { pushoverConfig } from './config.js';
import { PushoverChannel } from './pushover-notification.js';

export { pushoverConfig, type PushoverConfig } from './config.js';
export { PushoverChannel } from './pushover-notification.js';
export { FAILURE_PRIORITY, TEST_PRIORITY, priorityFor, renderPushoverForm } from './internal/render.js';

/** The `pushover` notification channel: push messages to Pushover users, groups or devices. */
export default defineNotificationAdapter({
  id: 'pushover',
  displayName: 'Pushover',
  description: 'Pushes each notification through the Pushover Message API; failures are sent at high priority.',
  configSchema: pushoverConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['TOKEN'],
  implementation: PushoverChannel,
});
