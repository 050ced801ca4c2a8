import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition, { EMBED_LIMITS, colorAsInteger } from '../src/index.js';
import { discordProblems, startDiscordReceiver } from './discord-receiver.js';

const TOKEN = 'dWebhookT0ken-x81Lq';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startDiscordReceiver(TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

const hook = (token = TOKEN) => `${receiver.url}/api/webhooks/42/${token}`;

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { webhookUrl: hook(), ...config }, { logger: recordingLogger(logs), ...context });
}

type Embed = { title: string; description: string; color: number; fields: { name: string; value: string; inline: boolean }[]; footer: { text: string } };
function lastBody(): { username: string; avatar_url?: string; embeds: Embed[] } {
  const request = receiver.requests.at(-1);
  expect(request && discordProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as never;
}

describe('discord channel against a local receiver following the Discord API', () => {
  it('posts one embed with title, description, integer colour, fields, footer and the default username', async () => {
    const fields = [{ name: 'Job', value: 'nightly', inline: true }, { name: 'Error', value: '' }];
    expect(await channel().send('Backup failed', { success: false, title: 'nightly', color: '#ff8800', eventType: 'backup_failure', fields })).toBe(true);
    const body = lastBody();
    expect(body.username).toBe('Holdfast');
    expect(body.avatar_url).toBeUndefined();
    expect(body.embeds).toHaveLength(1);
    expect(body.embeds[0]).toMatchObject({
      title: 'nightly',
      description: 'Backup failed',
      color: 0xff8800,
      fields: [{ name: 'Job', value: 'nightly', inline: true }, { name: 'Error', value: '-', inline: false }],
      footer: { text: 'Holdfast · backup_failure' },
    });
    expect(Number.isInteger(body.embeds[0]?.color)).toBe(true);
  });

  it('turns colours into integers, with outcome colours when none or an invalid one is given', () => {
    expect(colorAsInteger('#00ff00', undefined)).toBe(65280);
    expect(colorAsInteger('#f80', undefined)).toBe(0xff8800);
    expect(colorAsInteger(undefined, true)).toBe(0x22c55e);
    expect(colorAsInteger('red', false)).toBe(0xef4444);
    expect(colorAsInteger(undefined, undefined)).toBe(0x3b82f6);
  });

  it('uses the configured username and avatar', async () => {
    expect(await channel({ username: 'Backups', avatarUrl: 'https://example.com/a.png' }).send('x')).toBe(true);
    expect(lastBody()).toMatchObject({ username: 'Backups', avatar_url: 'https://example.com/a.png' });
  });

  it('keeps to 25 fields and the length limits, so Discord accepts oversized notifications', async () => {
    const fields = Array.from({ length: 40 }, (_, i) => ({ name: `Field ${i} ${'n'.repeat(300)}`, value: 'v'.repeat(2000) }));
    expect(await channel().send('m'.repeat(10_000), { title: 't'.repeat(400), fields })).toBe(true);
    const [embed] = lastBody().embeds;
    expect(embed?.fields.length).toBeLessThanOrEqual(EMBED_LIMITS.fields);
    expect(embed?.title).toHaveLength(256);
    const total = (embed?.title.length ?? 0) + (embed?.description.length ?? 0) + (embed?.footer.text.length ?? 0) +
      (embed?.fields ?? []).reduce((sum, field) => sum + field.name.length + field.value.length, 0);
    expect(total).toBeLessThanOrEqual(6000);
    expect(embed?.description.length).toBeGreaterThan(0);
  });

  it('a WEBHOOK credential profile wins over the config URL (secretUrl, then url)', async () => {
    const wrong = hook('config-token-wrong');
    expect(await channel({ webhookUrl: wrong }, { credentials: { primary: { type: 'WEBHOOK', secretUrl: hook() } } }).send('x')).toBe(true);
    expect(await channel({ webhookUrl: wrong }, { credentials: { primary: { type: 'WEBHOOK', url: hook() } } }).send('x')).toBe(true);
    expect(receiver.requests.map((request) => request.url)).toEqual([`/api/webhooks/42/${TOKEN}`, `/api/webhooks/42/${TOKEN}`]);
    expect(await channel({ webhookUrl: undefined }, { credentials: { primary: { type: 'WEBHOOK', secretUrl: hook() } } }).test()).toMatchObject({ success: true });
  });

  it('without a profile or a config URL, fails saying a credential profile is needed, sending nothing', async () => {
    const logs: string[] = [];
    const subject = channel({ webhookUrl: undefined }, {}, logs);
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Discord test failed: a credential profile of type WEBHOOK is needed (or set webhookUrl)' });
    expect(logs.join('\n')).toContain('credential profile of type WEBHOOK');
    const broken = channel({ webhookUrl: undefined }, { credentials: { primary: { type: 'WEBHOOK', secretUrl: `not a url ${TOKEN}` } } });
    const result = await broken.test();
    expect(result).toEqual({ success: false, message: 'Discord test failed: the WEBHOOK credential profile holds no http(s) URL' });
    expect(receiver.requests).toHaveLength(0);
  });

  it.each([
    [401, 'a wrong token', () => hook('wrong-token-123'), 'answered HTTP 401 Unauthorized'],
    [404, 'an unknown webhook path', () => `${receiver.url}/api/nothing`, 'answered HTTP 404 Not Found'],
  ])('an HTTP %i for %s gives false and a failed test without the token', async (_status, _what, url, expected) => {
    const logs: string[] = [];
    expect(await channel({ webhookUrl: url() }, {}, logs).send('x')).toBe(false);
    const result = await channel({ webhookUrl: url() }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining(expected) });
    expect(`${result.message}${logs.join('')}`).not.toContain('wrong-token-123');
    expect(`${result.message}${logs.join('')}`).not.toContain(TOKEN);
  });

  it.each([429, 500, 502])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: '{"message":"nope"}' });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('rejects usernames Discord refuses and non-http URLs at config validation', () => {
    for (const bad of [{ username: 'My Discord bot' }, { username: 'x'.repeat(81) }, { webhookUrl: 'file:///x' }, { avatarUrl: 'nope' }]) {
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
