import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition from '../src/index.js';
import { pushoverParams, pushoverProblems, startPushoverReceiver } from './pushover-receiver.js';

const TOKEN = 'aTokenForPushoverTests00000001';
const PROFILE_TOKEN = 'aProfileTokenForPushover000002';
const USER_KEY = 'uUserKeyForPushoverTests000003';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startPushoverReceiver(TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { appToken: TOKEN, userKey: USER_KEY, apiUrl: receiver.url, ...config }, { logger: recordingLogger(logs), ...context });
}

function lastParams(): Record<string, string> {
  const request = receiver.requests.at(-1);
  expect(request && pushoverProblems(request)).toEqual([]);
  return request ? pushoverParams(request) : {};
}

describe('pushover channel against a local receiver following the Pushover API', () => {
  it('posts token, user, title, message with field lines, priority, sound and device as a form', async () => {
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Size', value: '' }];
    expect(await channel({ sound: 'siren', device: 'phone,tablet' }).send('Backup done', { success: true, title: 'nightly ok', fields })).toBe(true);
    expect(receiver.requests[0]?.url).toBe('/1/messages.json');
    expect(receiver.requests[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(lastParams()).toEqual({
      token: TOKEN,
      user: USER_KEY,
      title: 'nightly ok',
      message: 'Backup done\n\nJob: nightly\nSize: -',
      priority: '0',
      sound: 'siren',
      device: 'phone,tablet',
    });
  });

  it('sends at the configured priority, failures at 1 or more, tests at -1, emergencies with retry and expire', async () => {
    expect(await channel({ priority: -1 }).send('ok', { success: true })).toBe(true);
    expect(lastParams().priority).toBe('-1');
    expect(await channel().send('failed', { success: false })).toBe(true);
    expect(lastParams().priority).toBe('1');
    await expect(channel().test()).resolves.toEqual({ success: true, message: 'Pushover accepted the test message (HTTP 200)' });
    expect(lastParams()).toMatchObject({ priority: '-1', title: 'Holdfast test notification' });
    expect(await channel({ priority: 2 }).send('failed', { success: false })).toBe(true);
    expect(lastParams()).toMatchObject({ priority: '2', retry: '60', expire: '3600' });
  });

  it('cuts messages to 1024 and titles to 250 characters', async () => {
    expect(await channel().send('m'.repeat(3000), { title: 't'.repeat(400) })).toBe(true);
    expect(lastParams().message).toHaveLength(1024);
    expect(lastParams().title).toHaveLength(250);
  });

  it('the TOKEN credential profile wins over the config token', async () => {
    await receiver.close();
    receiver = await startPushoverReceiver(PROFILE_TOKEN);
    expect(await channel({}, { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } }).send('x')).toBe(true);
    expect(await channel().send('x')).toBe(false);
  });

  it('without a profile or a config token, fails saying a credential profile is needed, sending nothing', async () => {
    const subject = channel({ appToken: undefined });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Pushover test failed: a credential profile of type TOKEN is needed (or set appToken)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('an invalid token gives 400: false and a failed test, without token or user key', async () => {
    const logs: string[] = [];
    expect(await channel({ appToken: 'aWrongTokenForPushover0000004' }, {}, logs).send('x')).toBe(false);
    const result = await channel({ appToken: 'aWrongTokenForPushover0000004' }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('answered HTTP 400 Bad Request') });
    expect(`${result.message}${logs.join('')}`).not.toMatch(/aWrongTokenForPushover|aTokenForPushover|uUserKeyForPushover/);
  });

  it.each([429, 500, 503])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: '{"status":0}' });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('rejects bad user keys, priorities, sounds and devices at config validation', () => {
    for (const bad of [{ userKey: 'short' }, { priority: 3 }, { priority: -3 }, { sound: 'Loud Sound' }, { device: 'a b' }]) {
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
