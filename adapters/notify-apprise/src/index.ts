import { defineNotificationAdapter } from '@holdfast/sdk';
import { appriseConfig } from './config.js';
import { AppriseChannel } from './apprise-notification.js';

export { appriseConfig, type AppriseConfig } from './config.js';
export { AppriseChannel } from './apprise-notification.js';
export { renderAppriseMessage, type AppriseMessage, type AppriseType } from './internal/render.js';

/** The `apprise` notification channel: one channel reaching the 90+ services an Apprise API server supports. */
export default defineNotificationAdapter({
  id: 'apprise',
  displayName: 'Apprise',
  description: 'Posts each notification to an Apprise API server, which fans it out to the services it is configured for.',
  configSchema: appriseConfig,
  capabilities: { fields: true, emailRecipient: false },
  implementation: AppriseChannel,
});
