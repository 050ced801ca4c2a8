import { afterEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition from '../src/index.js';
import { ntfyProblems, startNtfyReceiver } from './ntfy-receiver.js';

const TOKEN = 'tk_ntfytoken4c8a1f';
const PROFILE_TOKEN = 'tk_ntfyprofile0e77b3';
let receiver: HttpReceiver | undefined;

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function channel(config: Record<string, unknown> = {}, options: { token?: string; context?: Partial<AdapterContext>; logs?: string[] } = {}) {
  receiver = await startNtfyReceiver(options.token);
  return createAdapterInstance<NotificationChannel>(
    definition,
    { serverUrl: receiver.url, topic: 'backups_42', ...config },
    { logger: recordingLogger(options.logs ?? []), ...options.context },
  );
}

function lastBody(): Record<string, unknown> {
  const request = receiver?.requests.at(-1);
  expect(request && ntfyProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as Record<string, unknown>;
}

describe('ntfy channel against a local receiver following the ntfy API', () => {
  it('publishes topic, title, message with field lines, priority 3 and tags as JSON to the server root', async () => {
    const subject = await channel();
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Size', value: ' ' }];
    expect(await subject.send('Backup done ✓', { success: true, eventType: 'backup_success', title: 'Sauvegarde réussie', fields })).toBe(true);
    expect(receiver?.requests[0]?.url).toBe('/');
    expect(receiver?.requests[0]?.headers.authorization).toBeUndefined();
    expect(lastBody()).toEqual({
      topic: 'backups_42',
      title: 'Sauvegarde réussie',
      message: 'Backup done ✓\n\nJob: nightly\nSize: -',
      priority: 3,
      tags: ['white_check_mark', 'backup_success'],
    });
  });

  it('sends normal messages at the configured priority, failures at 5, tests at 2', async () => {
    const subject = await channel({ priority: 1 });
    expect(await subject.send('ok', { success: true })).toBe(true);
    expect(lastBody().priority).toBe(1);
    expect(await subject.send('failed', { success: false })).toBe(true);
    expect(lastBody()).toMatchObject({ priority: 5, tags: ['x'] });
    const result = await subject.test();
    expect(result).toEqual({ success: true, message: 'ntfy accepted the test message on topic backups_42 (HTTP 200)' });
    expect(lastBody()).toMatchObject({ priority: 2, title: 'Holdfast test notification' });
    const defaults = await channel();
    expect(await defaults.send('no outcome')).toBe(true);
    expect(lastBody()).toMatchObject({ priority: 3, tags: [] });
  });

  it('sends the config access token as a bearer token; a TOKEN profile wins', async () => {
    const withConfig = await channel({ accessToken: TOKEN }, { token: TOKEN });
    expect(await withConfig.send('x')).toBe(true);
    const withProfile = await channel({ accessToken: TOKEN }, { token: PROFILE_TOKEN, context: { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } } });
    expect(await withProfile.send('x')).toBe(true);
    expect(receiver?.requests[0]?.headers.authorization).toBe(`Bearer ${PROFILE_TOKEN}`);
  });

  it('a protected topic with a wrong token answers 403: false and a failed test, without the token', async () => {
    const logs: string[] = [];
    const subject = await channel({ accessToken: 'tk_wrongtoken' }, { token: TOKEN, logs });
    expect(await subject.send('x')).toBe(false);
    const result = await subject.test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('answered HTTP 403 Forbidden') });
    expect(`${result.message}${logs.join('')}`).not.toContain('tk_wrongtoken');
  });

  it.each([
    [400, 'Bad Request'],
    [429, 'Too Many Requests'],
    [500, 'Internal Server Error'],
    [502, 'Bad Gateway'],
  ])('an HTTP %i answer gives false and a failed test naming the status', async (status, text) => {
    const subject = await channel();
    receiver?.respondWith({ status, body: '{"code":1,"http":1,"error":"x"}' });
    expect(await subject.send('x', { success: false })).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: expect.stringContaining(`answered HTTP ${status} ${text}`) });
  });

  it('defaults the server to https://ntfy.sh and rejects bad topics and priorities at config validation', async () => {
    const parsed = definition.configSchema.parse({ topic: 'alerts' });
    expect(parsed).toEqual({ serverUrl: 'https://ntfy.sh', topic: 'alerts', priority: 3 });
    for (const bad of [{ topic: '' }, { topic: 'a/b' }, { topic: 'x'.repeat(65) }, { priority: 0 }, { priority: 6 }]) {
      let caught: unknown;
      try {
        await channel(bad);
      } catch (error) {
        caught = error;
      }
      expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
      await receiver?.close();
      receiver = undefined;
    }
  });
});
