import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = 'cfgWebhookTok3n-Aa81Zq';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { webhookUrl: `https://prod-1.westeurope.logic.azure.com/workflows/0af3c1/triggers/manual/paths/invoke?sig=${CONFIG_TOKEN}` },
});

// The suite's context is fixed while its endpoint URLs vary, so the webhook URL comes from the config here; the
// WEBHOOK profile path is covered in teams-requests.test.ts. The hanging check runs at the real bounds (own
// timeouts = the kernel's 30 s / 10 s).
describeNotificationChannel('teams', {
  definition,
  configFor: (baseUrl) => ({ webhookUrl: `${baseUrl}/workflows/0af3c1/triggers/manual/paths/invoke?sig=${CONFIG_TOKEN}` }),
  invalidConfig: { webhookUrl: `file:///workflows?sig=${CONFIG_TOKEN}` },
  secrets: [CONFIG_TOKEN],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
