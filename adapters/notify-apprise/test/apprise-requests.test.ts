import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, secretFieldsOf, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition, { type AppriseMessage } from '../src/index.js';
import { appriseProblems, startAppriseReceiver } from './apprise-receiver.js';

let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startAppriseReceiver(['holdfast-ops']);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown>, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { serverUrl: `${receiver.url}/`, ...config }, { logger: recordingLogger(logs) });
}

function lastBody(): AppriseMessage {
  const request = receiver.requests.at(-1);
  expect(request && appriseProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as AppriseMessage;
}

describe('apprise channel against a local receiver following the Apprise API', () => {
  it('stateful: posts title, body with field lines, type, format and tag to /notify/{key}', async () => {
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Size', value: '' }];
    expect(await channel({ key: 'holdfast-ops', tag: 'backups, ops' }).send('Backup failed', { success: false, title: 'nightly', fields })).toBe(true);
    expect(receiver.requests[0]?.url).toBe('/notify/holdfast-ops');
    expect(lastBody()).toEqual({ title: 'nightly', body: 'Backup failed\n\nJob: nightly\nSize: -', type: 'failure', format: 'text', tag: 'backups, ops' });
  });

  it('maps outcomes to Apprise types: success, failure, info', async () => {
    const subject = channel({ key: 'holdfast-ops' });
    expect(await subject.send('ok', { success: true })).toBe(true);
    expect(lastBody().type).toBe('success');
    expect(await subject.send('event')).toBe(true);
    expect(lastBody().type).toBe('info');
    await expect(subject.test()).resolves.toEqual({ success: true, message: 'Apprise notified its services (HTTP 200)' });
    expect(lastBody()).toMatchObject({ type: 'info', title: 'Holdfast test notification' });
  });

  it('stateless: posts the urls with the message to /notify/', async () => {
    expect(await channel({ urls: 'json://hooks.example.com/a, mailto://ops@example.com' }).send('x')).toBe(true);
    expect(receiver.requests[0]?.url).toBe('/notify/');
    expect(lastBody().urls).toBe('json://hooks.example.com/a, mailto://ops@example.com');
  });

  it('204 (nothing to notify: unknown key) is a failure with a message saying so', async () => {
    const subject = channel({ key: 'no-such-key' });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: expect.stringContaining('had nothing to notify') });
  });

  it('424 (a service failed) is a failure, without the secret URLs in the message or logs', async () => {
    const logs: string[] = [];
    const secretUrls = 'fail://token-abc123@service';
    expect(await channel({ urls: secretUrls }, logs).send('x')).toBe(false);
    const result = await channel({ urls: secretUrls }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('could not be notified') });
    expect(`${result.message}${logs.join('')}`).not.toContain('token-abc123');
    expect(logs.join('')).toContain('HTTP 424');
  });

  it.each([400, 401, 500, 502])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: 'nope' });
    expect(await channel({ key: 'holdfast-ops' }).send('x')).toBe(false);
    await expect(channel({ key: 'holdfast-ops' }).test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('requires exactly one of key or urls, and valid keys and tags, at config validation', () => {
    for (const bad of [{}, { key: 'a', urls: 'json://x' }, { key: 'bad/key' }, { key: 'ok', tag: 'a;b' }, { key: 'ok', serverUrl: 'ftp://x' }]) {
      let caught: unknown;
      try {
        channel(bad);
      } catch (error) {
        caught = error;
      }
      expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
    }
  });

  it('marks key and urls as secret fields', () => {
    expect(secretFieldsOf(definition.configSchema).sort()).toEqual(['key', 'urls']);
  });
});
