import { defineNotificationAdapter } from '@holdfast/sdk';
import { gotifyConfig } from './config.js';
import { GotifyChannel } from './gotify-notification.js';

export { gotifyConfig, type GotifyConfig } from './config.js';
export { GotifyChannel } from './gotify-notification.js';
export { FAILURE_PRIORITY, TEST_PRIORITY, priorityFor, renderGotifyMessage } from './internal/render.js';

/** The `gotify` notification channel: push messages through a self-hosted Gotify server. */
export default defineNotificationAdapter({
  id: 'gotify',
  displayName: 'Gotify',
  description: 'Pushes each notification to a self-hosted Gotify server; failures are sent at high priority.',
  configSchema: gotifyConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['TOKEN'],
  implementation: GotifyChannel,
});
