import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition, { escapeMrkdwn, type SlackPayload } from '../src/index.js';
import { slackProblems, startSlackReceiver } from './slack-receiver.js';

const TOKEN = 'sLackHookT0ken9z';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startSlackReceiver(TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

const hook = (token = TOKEN) => `${receiver.url}/services/T01/B02/${token}`;

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { webhookUrl: hook(), ...config }, { logger: recordingLogger(logs), ...context });
}

function lastBody(): SlackPayload {
  const request = receiver.requests.at(-1);
  expect(request && slackProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as SlackPayload;
}

describe('slack channel against a local receiver following the Slack webhook API', () => {
  it('posts a Block Kit layout: header, escaped message section, field section, context; text as fallback', async () => {
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Error', value: '' }];
    const sent = await channel({ channel: '#backups', iconEmoji: ':floppy_disk:' }).send('Disk <full> & "stuck"', {
      success: false,
      title: 'Backup failed',
      eventType: 'backup_failure',
      fields,
    });
    expect(sent).toBe(true);
    expect(lastBody()).toEqual({
      text: 'Backup failed: Disk <full> & "stuck"',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Backup failed', emoji: true } },
        { type: 'section', text: { type: 'mrkdwn', text: 'Disk &lt;full&gt; &amp; "stuck"' } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '*Job*\nnightly' }, { type: 'mrkdwn', text: '*Error*\n-' }] },
        { type: 'context', elements: [{ type: 'mrkdwn', text: ':x: Holdfast · backup_failure' }] },
      ],
      username: 'Holdfast',
      channel: '#backups',
      icon_emoji: ':floppy_disk:',
    });
  });

  it('splits many fields into sections of 10 and keeps header and text limits', async () => {
    const fields = Array.from({ length: 45 }, (_, i) => ({ name: `F${i}`, value: 'v'.repeat(2500) }));
    expect(await channel().send('m'.repeat(5000), { title: 't'.repeat(300), fields })).toBe(true);
    const body = lastBody();
    const sections = body.blocks.filter((block) => 'fields' in block);
    expect(sections.map((block) => ('fields' in block ? block.fields.length : 0))).toEqual([10, 10, 10, 10]);
    expect(body.blocks.length).toBeLessThanOrEqual(50);
  });

  it('escapes only &, < and > for mrkdwn', () => {
    expect(escapeMrkdwn('<!channel> a&b *bold* _x_')).toBe('&lt;!channel&gt; a&amp;b *bold* _x_');
  });

  it('a WEBHOOK credential profile wins over the config URL', async () => {
    const subject = channel({ webhookUrl: hook('stale-token') }, { credentials: { primary: { type: 'WEBHOOK', secretUrl: hook() } } });
    await expect(subject.test()).resolves.toEqual({ success: true, message: 'Slack accepted the test message (HTTP 200)' });
    expect(receiver.requests[0]?.url).toBe(`/services/T01/B02/${TOKEN}`);
    expect(lastBody().blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Holdfast test notification', emoji: true } });
  });

  it('without a profile or a config URL, fails saying a credential profile is needed, sending nothing', async () => {
    const subject = channel({ webhookUrl: undefined });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Slack test failed: a credential profile of type WEBHOOK is needed (or set webhookUrl)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it.each([
    [403, () => hook('bad-token-5566'), 'answered HTTP 403 Forbidden'],
    [404, () => `${receiver.url}/services/nope`, 'answered HTTP 404 Not Found'],
  ])('an HTTP %i answer gives false and a failed test without the token', async (_status, url, expected) => {
    const logs: string[] = [];
    expect(await channel({ webhookUrl: url() }, {}, logs).send('x')).toBe(false);
    const result = await channel({ webhookUrl: url() }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining(expected) });
    expect(`${result.message}${logs.join('')}`).not.toMatch(/bad-token-5566|sLackHookT0ken9z/);
  });

  it.each([400, 500, 503])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: 'invalid_payload' });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('rejects bad emoji codes and non-http URLs at config validation', () => {
    for (const bad of [{ iconEmoji: 'floppy' }, { webhookUrl: 'ftp://x' }, { channel: '' }]) {
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
