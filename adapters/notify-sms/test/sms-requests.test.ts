import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger } from '@holdfast/testkit';
import definition, { MAX_BODY } from '../src/index.js';
import { messageProblems, startTwilioReceiver, type TwilioReceiver } from './twilio-receiver.js';

const SID = 'AC11112222333344445555666677778888';
const TOKEN = 'twilioAuthT0ken-55aa';
const PROFILE_TOKEN = 'twilioProfileT0ken-66bb';
let receiver: TwilioReceiver;

beforeEach(async () => {
  receiver = await startTwilioReceiver(SID, TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(
    definition,
    { accountSid: SID, authToken: TOKEN, from: '+14155550100', to: '+4915112345678', apiUrl: receiver.url, ...config },
    { logger: recordingLogger(logs), ...context },
  );
}

function lastForm(): URLSearchParams {
  const request = receiver.requests.at(-1);
  expect(request && messageProblems(request)).toEqual([]);
  return new URLSearchParams(request?.body.toString('utf8'));
}

const SIX_FIELDS = Array.from({ length: 6 }, (_, i) => ({ name: `F${i + 1}`, value: i === 1 ? '' : `v${i + 1}` }));

describe('sms channel against a local receiver following the Twilio Messages API', () => {
  it('posts To, From and a Body with title, message and at most 4 fields, with Basic auth', async () => {
    expect(await channel().send('Backup failed: disk full', { success: false, title: 'nightly', fields: SIX_FIELDS })).toBe(true);
    expect(receiver.requests[0]?.url).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
    const form = lastForm();
    expect(form.get('To')).toBe('+4915112345678');
    expect(form.get('From')).toBe('+14155550100');
    expect(form.get('Body')).toBe('nightly\nBackup failed: disk full\nF1: v1\nF2: -\nF3: v3\nF4: v4');
    expect(form.get('Body')).not.toContain('F5');
  });

  it('counts HTTP 201 and HTTP 200 both as success', async () => {
    expect(await channel().send('created')).toBe(true);
    receiver.answerWith(200);
    expect(await channel().send('ok')).toBe(true);
    await expect(channel().test()).resolves.toEqual({ success: true, message: 'Twilio accepted the test SMS to +4915112345678 (HTTP 200)' });
    receiver.answerWith(201);
    await expect(channel().test()).resolves.toEqual({ success: true, message: 'Twilio accepted the test SMS to +4915112345678 (HTTP 201)' });
    expect(lastForm().get('Body')).toBe('Holdfast test\nThis is a test notification from Holdfast.');
  });

  it('does not count other 2xx answers (202, 204) as success', async () => {
    for (const status of [202, 204]) {
      receiver.respondWith({ status });
      expect(await channel().send('x')).toBe(false);
    }
  });

  it('cuts long messages to the 1600-character limit', async () => {
    expect(await channel().send('m'.repeat(5000))).toBe(true);
    expect(lastForm().get('Body')).toHaveLength(MAX_BODY);
  });

  it('the TOKEN credential profile wins over the config token', async () => {
    await receiver.close();
    receiver = await startTwilioReceiver(SID, PROFILE_TOKEN);
    expect(await channel({}, { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } }).send('x')).toBe(true);
    expect(await channel().send('x')).toBe(false);
  });

  it('without a profile or a config token, fails saying a credential profile is needed, sending nothing', async () => {
    const subject = channel({ authToken: undefined });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'SMS test failed: a credential profile of type TOKEN is needed (or set authToken)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a wrong auth token gives 401: false and a failed test, without the token', async () => {
    const logs: string[] = [];
    expect(await channel({ authToken: 'wrongAuthT0ken-77cc' }, {}, logs).send('x')).toBe(false);
    const result = await channel({ authToken: 'wrongAuthT0ken-77cc' }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('answered HTTP 401 Unauthorized') });
    expect(`${result.message}${logs.join('')}`).not.toMatch(/wrongAuthT0ken|twilioAuthT0ken/);
  });

  it.each([400, 429, 500, 503])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: '{"code":1,"message":"x"}' });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('validates from and to as E.164 numbers when the config is saved', () => {
    for (const bad of [{ to: '015112345678' }, { to: '+0151123' }, { from: '+1 415 555 0100' }, { from: '+1234567890123456' }, { accountSid: '' }]) {
      let caught: unknown;
      try {
        channel(bad);
      } catch (error) {
        caught = error;
      }
      expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
    }
    expect(() => channel({ to: ' +4915112345678 ' })).not.toThrow();
  });
});
