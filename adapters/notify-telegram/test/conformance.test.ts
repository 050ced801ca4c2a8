import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = '123456:AAcfgTelegramT0ken_x9';
const PROFILE_TOKEN = '654321:AAprofTelegramT0ken_q4';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { botToken: CONFIG_TOKEN, chatId: '-1001234567890' },
});

// The token comes from an assigned TOKEN profile, as the server passes it; the config token is there too, so the
// leak checks cover both (the token sits in the request path). The hanging check runs at the real bounds.
describeNotificationChannel('telegram', {
  definition,
  configFor: (baseUrl) => ({ apiUrl: baseUrl, botToken: CONFIG_TOKEN, chatId: '-1001234567890' }),
  context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } },
  invalidConfig: { botToken: CONFIG_TOKEN, chatId: '', parseMode: 'Markdown2' },
  secrets: [CONFIG_TOKEN, PROFILE_TOKEN],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
