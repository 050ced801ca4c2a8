import { defineNotificationAdapter } from '@holdfast/sdk';
import { teamsConfig } from './config.js';
import { TeamsChannel } from './teams-notification.js';

export { teamsConfig, type TeamsConfig } from './config.js';
export { TeamsChannel } from './teams-notification.js';
export { CARD_VERSION, renderTeamsPayload, type AdaptiveCard, type TeamsPayload } from './internal/render.js';

/** The `teams` notification channel: an Adaptive Card (version 1.4) posted to a Teams Workflows webhook. */
export default defineNotificationAdapter({
  id: 'teams',
  displayName: 'Microsoft Teams',
  description: 'Posts each notification as an Adaptive Card 1.4 to a Microsoft Teams Workflows webhook.',
  configSchema: teamsConfig,
  capabilities: { fields: true, emailRecipient: false },
  requiredCredentials: ['WEBHOOK'],
  implementation: TeamsChannel,
});
