import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = 'tk_ntfyconfig5b1e0c';
const PROFILE_TOKEN = 'tk_ntfyprofile93a4d2';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { topic: 'holdfast-alerts', accessToken: CONFIG_TOKEN },
});

// The hanging check runs at the real bounds: the channel's own timeouts equal the kernel's (30 s send, 10 s test).
describeNotificationChannel('ntfy', {
  definition,
  configFor: (baseUrl) => ({ serverUrl: baseUrl, topic: 'holdfast-alerts', accessToken: CONFIG_TOKEN }),
  context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } },
  invalidConfig: { serverUrl: `ftp://ntfy.example.com/${CONFIG_TOKEN}`, topic: 'bad topic/with spaces', accessToken: CONFIG_TOKEN, priority: 6 },
  secrets: [CONFIG_TOKEN, PROFILE_TOKEN],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
