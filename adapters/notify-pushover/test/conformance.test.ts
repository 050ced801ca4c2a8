import { readFileSync } from 'node:fs';
import { NOTIFICATION_SEND_TIMEOUT_MS, NOTIFICATION_TEST_TIMEOUT_MS } from '@holdfast/sdk';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const CONFIG_TOKEN = 'azGDORePK8gMaC0QOYAMyEEuzJnyUi';
const PROFILE_TOKEN = 'aprofiletokenQOYAMyEEuzJnyUi77';
const USER_KEY = 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { appToken: CONFIG_TOKEN, userKey: USER_KEY },
});

// The token comes from an assigned TOKEN profile, as the server passes it; the config token and the user key are
// secrets too, so the leak checks cover all three. The hanging check runs at the real bounds.
describeNotificationChannel('pushover', {
  definition,
  configFor: (baseUrl) => ({ appToken: CONFIG_TOKEN, userKey: USER_KEY, apiUrl: baseUrl }),
  context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } },
  invalidConfig: { appToken: CONFIG_TOKEN, userKey: `${USER_KEY}!`, priority: 3 },
  secrets: [CONFIG_TOKEN, PROFILE_TOKEN, USER_KEY],
  ownTimeoutMs: { send: NOTIFICATION_SEND_TIMEOUT_MS + 1_000, test: NOTIFICATION_TEST_TIMEOUT_MS + 1_000 },
});
