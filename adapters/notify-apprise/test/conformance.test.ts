import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const URL_SECRET = 'tgram://123456:AAappriseBotT0ken/-1001';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { serverUrl: 'http://apprise:8000', urls: URL_SECRET },
});

// Stateless mode: the secret Apprise URL travels in the body; the leak checks prove it never reaches results or
// logs. The hanging check runs at the real bounds (own timeouts = the kernel's 30 s / 10 s).
describeNotificationChannel('apprise', {
  definition,
  configFor: (baseUrl) => ({ serverUrl: baseUrl, urls: URL_SECRET }),
  invalidConfig: { serverUrl: 'http://apprise:8000', urls: URL_SECRET, key: 'both-set' },
  secrets: [URL_SECRET, 'AAappriseBotT0ken'],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
