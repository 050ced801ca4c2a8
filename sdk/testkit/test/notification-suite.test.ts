import { describe, expect, it } from 'vitest';
import { describeNotificationChannel, findCheck, notificationChannelChecks, type NotificationSuiteOptions } from '../src/index.js';
import { fixtureChannel, type ChannelFlaw } from './fixtures/fixture-channel.js';

const TOKEN = 'fixture-secret-token-93b1';

function fixtureOptions(flaws: ChannelFlaw[] = []): NotificationSuiteOptions {
  return {
    definition: fixtureChannel,
    configFor: (baseUrl) => ({ url: `${baseUrl}/notify`, token: TOKEN, flaws }),
    invalidConfig: { url: 'not a url', token: TOKEN },
    secrets: [TOKEN],
    boundMs: 1_000,
    // The fixture gives up after 1.2 s: generous for a loopback receiver on a loaded CI machine (500 ms once was not).
    ownTimeoutMs: { send: 2_500, test: 2_500 },
  };
}

async function failureOf(flaws: ChannelFlaw[], checkName: string): Promise<string> {
  const check = findCheck(notificationChannelChecks(fixtureOptions(flaws)), checkName);
  try {
    await check.run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`check "${check.name}" passed for a channel with ${flaws.join(', ')}`);
}

describeNotificationChannel('fixture channel (correct)', fixtureOptions());

describe('the notification suite catches broken channels', () => {
  it('a send that throws', async () => {
    expect(await failureOf(['throwing-send'], 'exactly one request')).toContain('send() must never throw or reject; it threw: send exploded');
  });

  it('a send without its own timeout against a hanging host', async () => {
    expect(await failureOf(['no-timeout'], 'hanging host')).toContain('did not settle within 2500 ms against a hanging host');
  });

  it('a test message that contains the token', async () => {
    expect(await failureOf(['leaky-test-message'], 'unreachable host')).toMatch(/a result message \(unreachable endpoint\) contains the secret value "fix…"/);
  });

  it('a log entry that contains the token', async () => {
    expect(await failureOf(['leaky-log'], 'answering 401')).toMatch(/a log entry \(failing endpoint\) contains the secret value/);
  });

  it('a token header that follows a redirect to another host (issue 41)', async () => {
    expect(await failureOf(['key-header-follows-redirects'], 'a 302 to another host')).toContain('secrets reached the other host after a 302');
  });

  it('a send that posts twice', async () => {
    expect(await failureOf(['double-send'], 'exactly one request')).toContain('the receiver got 2 requests for one send');
  });

  it('a send that leaves a rejected promise behind', async () => {
    // vitest fails a run on any unhandled rejection; hand this one to the suite's tracker alone while it runs.
    const vitestListeners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    try {
      expect(await failureOf(['floating-rejection'], 'answering 401')).toContain('unhandled rejections happened (failing endpoint)');
    } finally {
      for (const listener of vitestListeners) process.on('unhandledRejection', listener);
    }
  });
});
