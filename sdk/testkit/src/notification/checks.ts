import { createAdapterInstance } from '../helpers/instantiate.js';
import assert from 'node:assert/strict';
import { isAdapterError, sendBounded, testBounded } from '@holdfast/sdk';
import type { ConformanceCheck } from '../checks.js';
import { closedPortUrl, startHangingEndpoint, startHttpReceiver, type HttpReceiver } from '../helpers/http-endpoints.js';
import { startRedirectPair, type RedirectStatus } from '../helpers/redirect-pair.js';
import {
  SAMPLE_CONTEXT,
  assertNoSecrets,
  buildChannel,
  sendSafely,
  settlesWithin,
  testSafely,
  trackUnhandledRejections,
  type ChannelUnderTest,
  type NotificationCheckGroup,
  type NotificationEndpointKind,
  type NotificationSuiteOptions,
} from './harness.js';

/** Starts the endpoint of `kind`, builds a channel aimed at it, runs `work`, and proves nothing leaked afterwards. */
async function withEndpoint(
  options: NotificationSuiteOptions<unknown>,
  kind: NotificationEndpointKind,
  work: (subject: ChannelUnderTest, receiver: HttpReceiver | undefined) => Promise<string[]>,
): Promise<void> {
  const tracker = trackUnhandledRejections();
  let receiver: HttpReceiver | undefined;
  let close: () => Promise<void> = async () => undefined;
  let url: string;
  if (kind === 'receiver' || kind === 'failing') {
    receiver = await startHttpReceiver(kind === 'failing' ? { status: 401, body: '{"error":"invalid token"}' } : undefined);
    url = receiver.url;
    close = receiver.close;
  } else if (kind === 'hanging') {
    const hanging = await startHangingEndpoint();
    url = hanging.url;
    close = hanging.close;
  } else {
    url = await closedPortUrl();
  }
  try {
    const subject = buildChannel(options, await options.configFor(url, kind));
    try {
      const messages = await work(subject, receiver);
      assertNoSecrets(options.secrets, messages, `a result message (${kind} endpoint)`);
      assertNoSecrets(options.secrets, subject.logs, `a log entry (${kind} endpoint)`);
    } finally {
      await subject.channel.dispose?.();
    }
  } finally {
    await close();
  }
  const unhandled = await tracker.stop();
  assert.deepEqual(unhandled.map(String), [], `unhandled rejections happened (${kind} endpoint); settle every promise you start`);
}

/** Sends and tests against an endpoint that cannot succeed, expecting `false` and an unsuccessful test. */
function failingScenario(options: NotificationSuiteOptions<unknown>, kind: 'failing' | 'unreachable'): () => Promise<void> {
  return () =>
    withEndpoint(options, kind, async ({ channel }) => {
      assert.equal(await sendSafely(channel, 'Backup failed', SAMPLE_CONTEXT), false, `send() must resolve false (${kind} endpoint)`);
      const result = await testSafely(channel);
      assert.equal(result.success, false, `test() must report success: false (${kind} endpoint)`);
      assert.ok(result.message.trim().length > 0, 'a failed test needs a message saying why');
      return [result.message];
    });
}

/**
 * The configured host redirects every request to another host (127.0.0.1 -> 127.0.0.2): none of the secrets may
 * arrive there, in a header, the URL or a re-sent body (issue 41: a webhook's X-Api-Key and Gotify's X-Gotify-Key did).
 */
function redirectScenario(options: NotificationSuiteOptions<unknown>, status: RedirectStatus): () => Promise<void> {
  return async () => {
    const pair = await startRedirectPair(status);
    try {
      const subject = buildChannel(options, await options.configFor(pair.url, 'receiver'));
      try {
        await sendSafely(subject.channel, 'Backup "nightly" failed', SAMPLE_CONTEXT);
        const result = await testSafely(subject.channel);
        assert.ok(pair.first.requests.length >= 1, 'the channel sent nothing to its configured host');
        assert.deepEqual(pair.leaked(options.secrets).map((secret) => `${secret.slice(0, 3)}…`), [], `secrets reached the other host after a ${status}`);
        assertNoSecrets(options.secrets, [result.message], `a result message (${status} redirect)`);
        assertNoSecrets(options.secrets, subject.logs, `a log entry (${status} redirect)`);
      } finally {
        await subject.channel.dispose?.();
      }
    } finally {
      await pair.close();
    }
  };
}

/** The notification checks as a list. */
export function notificationChecks(options: NotificationSuiteOptions<unknown>): ConformanceCheck<NotificationCheckGroup>[] {
  const own = options.ownTimeoutMs ?? { send: 30_000, test: 10_000 };
  const bound = options.boundMs ?? 2_000;
  return [
    {
      group: 'delivery',
      name: 'a good send resolves true and the receiver gets exactly one request',
      run: () =>
        withEndpoint(options, 'receiver', async ({ channel }, receiver) => {
          assert.equal(await sendSafely(channel, 'Backup "nightly" failed', SAMPLE_CONTEXT), true, 'send() to a 200 receiver must resolve true');
          // A retrying or duplicating channel would show a second request a moment later.
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.equal(receiver?.requests.length, 1, `the receiver got ${receiver?.requests.length} requests for one send`);
          return [];
        }),
    },
    {
      group: 'delivery',
      name: 'test() against a good receiver succeeds with a message',
      run: () =>
        withEndpoint(options, 'receiver', async ({ channel }, receiver) => {
          const result = await testSafely(channel);
          assert.equal(result.success, true, `test() failed against a 200 receiver: ${result.message}`);
          assert.ok((receiver?.requests.length ?? 0) >= 1, 'test() reported success without sending anything');
          return [result.message];
        }),
    },
    { group: 'failures', name: 'an endpoint answering 401 gives false / an unsuccessful test, without secrets', run: failingScenario(options, 'failing') },
    { group: 'failures', name: 'an unreachable host gives false / an unsuccessful test, without secrets', run: failingScenario(options, 'unreachable') },
    { group: 'redirects', name: 'a 302 to another host carries no secret there', run: redirectScenario(options, 302) },
    { group: 'redirects', name: 'a 307 to another host carries no secret (and no body) there', run: redirectScenario(options, 307) },
    {
      group: 'timeouts',
      name: 'a hanging host: bounded calls give false, and the adapter settles by its own timeout',
      timeoutMs: Math.max(own.send, own.test) + bound + 10_000,
      run: () =>
        withEndpoint(options, 'hanging', async ({ channel }) => {
          const ownSend = settlesWithin(sendSafely(channel, 'Backup failed', SAMPLE_CONTEXT), own.send);
          const ownTest = settlesWithin(testSafely(channel), own.test);
          // Both are awaited below; the no-op handlers only keep an early failure from counting as unhandled.
          ownSend.catch(() => undefined);
          ownTest.catch(() => undefined);
          assert.equal(await sendBounded(channel, 'Backup failed', SAMPLE_CONTEXT, bound), false, 'sendBounded must give false for a hanging host');
          assert.equal((await testBounded(channel, bound)).success, false, 'testBounded must give success: false for a hanging host');
          const [send, test] = await Promise.all([ownSend, ownTest]);
          assert.ok(send.settled, `send() did not settle within ${own.send} ms against a hanging host: give it its own timeout`);
          assert.equal(send.value, false, 'send() to a hanging host must resolve false');
          assert.ok(test.settled, `test() did not settle within ${own.test} ms against a hanging host: give it its own timeout`);
          assert.equal(test.value.success, false, 'test() against a hanging host must report success: false');
          return [test.value.message];
        }),
    },
    {
      group: 'config validation',
      name: 'an invalid config is rejected with AdapterError CONFIG that names no secret',
      run: async () => {
        let caught: unknown;
        try {
          createAdapterInstance(options.definition, options.invalidConfig);
        } catch (error) {
          caught = error;
        }
        assert.ok(isAdapterError(caught), 'the invalid config was accepted (or failed without an AdapterError)');
        assert.equal(caught.code, 'CONFIG', `invalid config must fail with code CONFIG, got ${caught.code}`);
        assertNoSecrets(options.secrets, [caught.message], 'the config error message');
      },
    },
  ];
}
