import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = 'twilioCfgAuthT0ken4e21';
const PROFILE_TOKEN = 'twilioProfAuthT0ken8c03';
const numbers = { accountSid: 'AC0123456789abcdef0123456789abcdef', from: '+14155550100', to: '+4915112345678' };

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { ...numbers, authToken: CONFIG_TOKEN },
});

// The token comes from an assigned TOKEN profile, as the server passes it; the config token is there too, so the
// leak checks cover both (inside the Basic auth header). The hanging check runs at the real bounds.
describeNotificationChannel('sms', {
  definition,
  configFor: (baseUrl) => ({ ...numbers, authToken: CONFIG_TOKEN, apiUrl: baseUrl }),
  context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } },
  invalidConfig: { ...numbers, authToken: CONFIG_TOKEN, to: '0151 1234 5678' },
  secrets: [CONFIG_TOKEN, PROFILE_TOKEN],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
