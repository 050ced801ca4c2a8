import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition from '../src/index.js';
import { gotifyProblems, startGotifyReceiver } from './gotify-receiver.js';

const TOKEN = 'AgotifyT0ken-31b7';
const PROFILE_TOKEN = 'AgotifyProfile-8d2e';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startGotifyReceiver(TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(
    definition,
    { serverUrl: `${receiver.url}/gotify/`, appToken: TOKEN, ...config },
    { logger: recordingLogger(logs), ...context },
  );
}

function lastBody(): Record<string, unknown> {
  const request = receiver.requests.at(-1);
  expect(request && gotifyProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as Record<string, unknown>;
}

describe('gotify channel against a local receiver following the Gotify API', () => {
  it('posts title, message with field lines and the configured priority (default 5) to /message', async () => {
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Size', value: '' }];
    expect(await channel().send('Backup done', { success: true, title: 'nightly ok', fields })).toBe(true);
    expect(receiver.requests[0]?.url).toBe('/gotify/message');
    expect(receiver.requests[0]?.headers['x-gotify-key']).toBe(TOKEN);
    expect(lastBody()).toEqual({
      title: 'nightly ok',
      message: 'Backup done\n\nJob: nightly\nSize: -',
      priority: 5,
      extras: { 'client::display': { contentType: 'text/plain' } },
    });
  });

  it('sends normal messages at the configured priority, failures at 8, tests at 1', async () => {
    expect(await channel({ priority: 3 }).send('ok', { success: true })).toBe(true);
    expect(lastBody().priority).toBe(3);
    expect(await channel().send('system event')).toBe(true);
    expect(lastBody().priority).toBe(5);
    expect(await channel().send('failed', { success: false })).toBe(true);
    expect(lastBody().priority).toBe(8);
    expect(await channel({ priority: 10 }).send('failed', { success: false })).toBe(true);
    expect(lastBody().priority).toBe(10);
    await expect(channel().test()).resolves.toEqual({ success: true, message: 'Gotify accepted the test message (HTTP 200)' });
    expect(lastBody()).toMatchObject({ priority: 1, title: 'Holdfast test notification' });
  });

  it('uses the TOKEN credential profile over the config token', async () => {
    receiver.respondWith((request) => ({ status: request.headers['x-gotify-key'] === PROFILE_TOKEN ? 200 : 401 }));
    expect(await channel({}, { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } }).send('x')).toBe(true);
    expect(receiver.requests[0]?.headers['x-gotify-key']).toBe(PROFILE_TOKEN);
  });

  it('without a profile or a config token, fails saying a credential profile is needed, sending nothing', async () => {
    const logs: string[] = [];
    const subject = channel({ appToken: undefined }, {}, logs);
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Gotify test failed: a credential profile of type TOKEN is needed (or set appToken)' });
    expect(logs.join('\n')).toContain('credential profile of type TOKEN');
    expect(receiver.requests).toHaveLength(0);
  });

  it.each([
    [400, 'Bad Request'],
    [403, 'Forbidden'],
    [500, 'Internal Server Error'],
    [503, 'Service Unavailable'],
  ])('an HTTP %i answer gives false and a failed test naming the status, without the token', async (status, text) => {
    receiver.respondWith({ status, body: `{"error":"${text}","token":"${TOKEN}"}` });
    const logs: string[] = [];
    expect(await channel({}, {}, logs).send('x', { success: false })).toBe(false);
    const result = await channel().test();
    expect(result).toEqual({ success: false, message: expect.stringContaining(`answered HTTP ${status} ${text}`) });
    expect(`${result.message}\n${logs.join('\n')}`).not.toContain(TOKEN);
  });

  it('a wrong token is rejected by the receiver with 401', async () => {
    expect(await channel({ appToken: 'wrong-token-value' }).send('x')).toBe(false);
  });

  it('rejects a priority outside 0..10, a non-integer and a non-http URL at config validation', () => {
    for (const bad of [{ priority: 11 }, { priority: -1 }, { priority: 2.5 }, { serverUrl: 'file:///etc' }]) {
      let caught: unknown;
      try {
        channel(bad);
      } catch (error) {
        caught = error;
      }
      expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
    }
  });
});
