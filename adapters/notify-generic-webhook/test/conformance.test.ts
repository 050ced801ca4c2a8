import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const AUTH_SECRET = 'Bearer hf-secret-auth-7f3a9c';
const PATH_SECRET = 'hook-token-d41d8cd98f00';
// A secret custom header: issue 41 saw one follow a redirect to another host.
const KEY_SECRET = 'hf-api-key-5e0b2c71';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { webhookUrl: 'https://hooks.example.com/notify', authHeader: AUTH_SECRET },
});

describeNotificationChannel('generic-webhook', {
  definition,
  configFor: (baseUrl, kind) => ({
    webhookUrl: `${baseUrl}/hooks/${PATH_SECRET}?token=${PATH_SECRET}`,
    authHeader: AUTH_SECRET,
    customHeaders: `X-Source: holdfast-tests\nX-Api-Key: ${KEY_SECRET}`,
    // One second against the hanging host keeps the suite fast; the default (15 s) is what users get.
    timeoutSeconds: kind === 'hanging' ? 1 : 5,
  }),
  invalidConfig: { webhookUrl: `ftp://example.com/${PATH_SECRET}`, authHeader: AUTH_SECRET, method: 'GET' },
  secrets: [AUTH_SECRET, PATH_SECRET, KEY_SECRET],
  boundMs: 3_000,
  // A test always waits SPEC's whole 10 s (issue 10.10); sends use the config's timeoutSeconds.
  ownTimeoutMs: { send: 3_000, test: 10_500 },
});
