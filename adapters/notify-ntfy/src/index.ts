import { defineNotificationAdapter } from '@holdfast/sdk';
import { ntfyConfig } from './config.js';
import { NtfyChannel } from './ntfy-notification.js';

export { ntfyConfig, type NtfyConfig } from './config.js';
export { NtfyChannel } from './ntfy-notification.js';
export { FAILURE_PRIORITY, TEST_PRIORITY, priorityFor, renderNtfyMessage } from './internal/render.js';

/** The `ntfy` notification channel: publish to a topic on ntfy.sh or a self-hosted ntfy server. */
export default defineNotificationAdapter({
  id: 'ntfy',
  displayName: 'ntfy',
  description: 'Publishes each notification to an ntfy topic; failures are sent at the highest priority.',
  configSchema: ntfyConfig,
  capabilities: { fields: true, emailRecipient: false },
  // No requiredCredentials: public topics need no token; a TOKEN profile is used when one is assigned.
  implementation: NtfyChannel,
});
