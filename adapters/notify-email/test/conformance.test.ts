import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeNotificationChannel } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

const PASSWORD = 'smtp-pass-9c1e77b04a';

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { host: 'smtp.example.com', from: 'backup@example.com', to: 'ops@example.com', user: 'mailer', password: PASSWORD },
});

// The suite's endpoints speak HTTP: against them an SMTP client sees no greeting (401 server, hanging host) or a
// refused port, which exercises the failure and timeout paths. Delivery to a real SMTP server is covered by
// smtp-delivery.test.ts, so the HTTP "delivery" group is switched off here.
describeNotificationChannel('email', {
  definition,
  configFor: (baseUrl) => {
    const url = new URL(baseUrl);
    return { host: url.hostname, port: Number(url.port), secure: 'none', user: 'mailer', password: PASSWORD, from: 'backup@example.com', to: 'ops@example.com', timeoutSeconds: 1 };
  },
  invalidConfig: { host: '', from: 'backup@example.com', to: 'not-an-address', password: PASSWORD, secure: 'tls' },
  secrets: [PASSWORD],
  boundMs: 1_500,
  // Sends use the config's 1 s steps; a test always gets SPEC's whole 10 s (issue 10.10).
  ownTimeoutMs: { send: 4_000, test: 10_500 },
  // SMTP has no redirects to follow (the HTTP redirect checks of issue 41 do not apply).
  disable: ['delivery', 'redirects'],
});
