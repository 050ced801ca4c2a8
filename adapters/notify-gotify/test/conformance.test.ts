import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = 'AgotifyCfgT0ken9f2';
const PROFILE_TOKEN = 'AgotifyProfT0ken7c1';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { serverUrl: 'https://gotify.example.com', appToken: CONFIG_TOKEN },
});

// The token comes from an assigned TOKEN profile (as the server passes it); the config token is there too, so the
// leak checks cover both. The hanging check runs at the real bounds: the channel's own timeouts equal the kernel's
// (30 s send, 10 s test), so the check waits just over them.
describeNotificationChannel('gotify', {
  definition,
  configFor: (baseUrl) => ({ serverUrl: `${baseUrl}/gotify`, appToken: CONFIG_TOKEN }),
  context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } },
  invalidConfig: { serverUrl: `ftp://gotify.example.com/${CONFIG_TOKEN}`, appToken: CONFIG_TOKEN, priority: 11 },
  secrets: [CONFIG_TOKEN, PROFILE_TOKEN],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
