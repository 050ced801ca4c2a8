import { defineNotificationAdapter } from '@holdfast/sdk';
import { slackConfig } from './config.js';
import { SlackChannel } from './slack-notification.js';

export { slackConfig, type SlackConfig } from './config.js';
export { SlackChannel } from './slack-notification.js';
export { BLOCK_LIMITS, escapeMrkdwn, renderSlackPayload, type SlackBlock, type SlackPayload } from './internal/render.js';

/** The `slack` notification channel: an incoming-webhook message laid out with Block Kit. */
export default defineNotificationAdapter({
  id: 'slack',
  displayName: 'Slack',
  description: 'Posts each notification to a Slack incoming webhook with a Block Kit layout (header, text, fields).',
  configSchema: slackConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['WEBHOOK'],
  implementation: SlackChannel,
});
