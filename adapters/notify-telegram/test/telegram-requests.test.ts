import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition, { type SendMessageBody } from '../src/index.js';
import { sendMessageProblems, startTelegramReceiver } from './telegram-receiver.js';

const TOKEN = '777000:AAtelegramT0ken-zz91';
const PROFILE_TOKEN = '777001:AAprofileT0ken-kk12';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startTelegramReceiver(TOKEN);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(
    definition,
    { apiUrl: receiver.url, botToken: TOKEN, chatId: '-1001234567890', ...config },
    { logger: recordingLogger(logs), ...context },
  );
}

function lastBody(): SendMessageBody {
  const request = receiver.requests.at(-1);
  expect(request && sendMessageProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as SendMessageBody;
}

const CONTEXT = { success: false, title: 'Backup "db_main" <failed>', eventType: 'backup_failure', fields: [{ name: 'Job', value: 'db_main (v1.2)' }, { name: 'Error', value: '' }] };

describe('telegram channel against a local receiver following the Telegram Bot API', () => {
  it('sends HTML by default: bold title, escaped text, fields, italic footer, no preview', async () => {
    expect(await channel().send('disk full: 100% > 99.9% & rising', CONTEXT)).toBe(true);
    expect(receiver.requests[0]?.url).toBe(`/bot${TOKEN}/sendMessage`);
    expect(lastBody()).toEqual({
      chat_id: '-1001234567890',
      text: '<b>Backup "db_main" &lt;failed&gt;</b>\n\ndisk full: 100% &gt; 99.9% &amp; rising\n\n<b>Job:</b> db_main (v1.2)\n<b>Error:</b> -\n\n<i>Holdfast · backup_failure</i>',
      parse_mode: 'HTML',
      disable_notification: false,
      link_preview_options: { is_disabled: true },
    });
  });

  it('sends MarkdownV2 escaped so the receiver parses it', async () => {
    expect(await channel({ parseMode: 'MarkdownV2' }).send('disk full: 100% > 99.9% & rising!', CONTEXT)).toBe(true);
    expect(lastBody().text).toBe(
      '*Backup "db\\_main" <failed\\>*\n\ndisk full: 100% \\> 99\\.9% & rising\\!\n\n*Job:* db\\_main \\(v1\\.2\\)\n*Error:* \\-\n\n_Holdfast · backup\\_failure_',
    );
  });

  it('sends legacy Markdown escaped so the receiver parses it', async () => {
    expect(await channel({ parseMode: 'Markdown' }).send('use *snake_case* [x]', CONTEXT)).toBe(true);
    expect(lastBody().text).toBe(
      '*Backup "db*\\_*main" <failed>*\n\nuse \\*snake\\_case\\* \\[x]\n\n*Job:* db\\_main (v1.2)\n*Error:* -\n\n_Holdfast · backup_\\__failure_',
    );
  });

  it('passes disableNotification and messageThreadId', async () => {
    expect(await channel({ disableNotification: true, messageThreadId: 42 }).send('quiet')).toBe(true);
    expect(lastBody()).toMatchObject({ disable_notification: true, message_thread_id: 42 });
  });

  it('keeps a huge message within 4096 visible characters in every mode', async () => {
    const fields = Array.from({ length: 50 }, (_, i) => ({ name: `F${i}.`, value: '!'.repeat(400) }));
    for (const parseMode of ['HTML', 'MarkdownV2', 'Markdown']) {
      expect(await channel({ parseMode }).send('.'.repeat(9000), { title: '_'.repeat(300), fields })).toBe(true);
      lastBody();
    }
  });

  it('the TOKEN credential profile wins over the config token; test() reports delivery', async () => {
    receiver.respondWith((request) => ({ status: request.url === `/bot${PROFILE_TOKEN}/sendMessage` ? 200 : 401, body: '{"ok":true,"result":{}}' }));
    const subject = channel({}, { credentials: { primary: { type: 'TOKEN', token: PROFILE_TOKEN } } });
    await expect(subject.test()).resolves.toEqual({ success: true, message: 'Telegram delivered the test message to chat -1001234567890' });
  });

  it('without a profile or a config token, fails saying a credential profile is needed, sending nothing', async () => {
    const subject = channel({ botToken: undefined });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Telegram test failed: a credential profile of type TOKEN is needed (or set botToken)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a wrong token gives 401 with Telegram\'s description and never the token', async () => {
    const logs: string[] = [];
    const wrong = '999:AAwrongT0ken';
    expect(await channel({ botToken: wrong }, {}, logs).send('x')).toBe(false);
    const result = await channel({ botToken: wrong }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('answered HTTP 401 Unauthorized: Unauthorized') });
    expect(`${result.message}${logs.join('')}`).not.toMatch(/AAwrongT0ken|AAtelegramT0ken/);
  });

  it.each([
    [400, '{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}', 'Bad Request: chat not found'],
    [429, '{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5"}', 'retry after 5'],
    [500, 'oops', 'answered HTTP 500 Internal Server Error'],
    [502, '', 'answered HTTP 502 Bad Gateway'],
  ])('an HTTP %i answer gives false and a failed test naming why', async (status, body, expected) => {
    receiver.respondWith({ status, body });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toEqual({ success: false, message: expect.stringContaining(expected) });
  });

  it('rejects unknown parse modes, empty chat ids and bad thread ids at config validation', () => {
    for (const bad of [{ parseMode: 'markdown' }, { chatId: ' ' }, { messageThreadId: 0 }, { messageThreadId: 1.5 }, { apiUrl: 'ftp://x' }]) {
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
