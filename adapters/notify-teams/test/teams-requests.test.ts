import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, type HttpReceiver } from '@holdfast/testkit';
import definition, { type TeamsPayload } from '../src/index.js';
import { startTeamsReceiver, teamsProblems, workflowUrl } from './teams-receiver.js';

const SIG = 'teamsSig0aB9xYz12';
let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startTeamsReceiver(SIG);
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { webhookUrl: workflowUrl(receiver.url, SIG), ...config }, { logger: recordingLogger(logs), ...context });
}

function lastBody(): TeamsPayload {
  const request = receiver.requests.at(-1);
  expect(request && teamsProblems(request)).toEqual([]);
  return JSON.parse(request?.body.toString('utf8') ?? '') as TeamsPayload;
}

describe('teams channel against a local receiver following the Teams Workflows webhook', () => {
  it('posts an Adaptive Card version 1.4 wrapped as a Teams message, with heading, text, facts and footer', async () => {
    const fields = [{ name: 'Job', value: 'nightly' }, { name: 'Error', value: '' }];
    expect(await channel().send('Disk full', { success: false, title: 'Backup failed', eventType: 'backup_failure', fields })).toBe(true);
    const body = lastBody();
    expect(body.type).toBe('message');
    expect(body.attachments).toHaveLength(1);
    const [attachment] = body.attachments;
    expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(attachment.content.type).toBe('AdaptiveCard');
    expect(attachment.content.version).toBe('1.4');
    expect(attachment.content.body).toEqual([
      { type: 'TextBlock', text: 'Backup failed', wrap: true, size: 'Large', weight: 'Bolder', color: 'Attention', style: 'heading' },
      { type: 'TextBlock', text: 'Disk full', wrap: true },
      { type: 'FactSet', facts: [{ title: 'Job', value: 'nightly' }, { title: 'Error', value: '-' }] },
      { type: 'TextBlock', text: 'Holdfast · backup_failure', wrap: true, size: 'Small', isSubtle: true },
    ]);
  });

  it('colours the heading by outcome and leaves out an empty FactSet', async () => {
    expect(await channel().send('ok', { success: true })).toBe(true);
    const card = lastBody().attachments[0].content;
    expect(card.body[0]).toMatchObject({ color: 'Good', text: 'Holdfast notification' });
    expect(card.body.some((element) => element.type === 'FactSet')).toBe(false);
    expect(await channel().send('no outcome')).toBe(true);
    expect(lastBody().attachments[0].content.body[0]).toMatchObject({ color: 'Default' });
  });

  it('a WEBHOOK credential profile wins over the config URL; the test posts a card (202 counts as success)', async () => {
    const subject = channel({ webhookUrl: workflowUrl(receiver.url, 'stale-sig') }, { credentials: { primary: { type: 'WEBHOOK', secretUrl: workflowUrl(receiver.url, SIG) } } });
    await expect(subject.test()).resolves.toEqual({ success: true, message: 'Teams accepted the test message (HTTP 202)' });
    expect(lastBody().attachments[0].content.body[0]).toMatchObject({ text: 'Holdfast test notification' });
  });

  it('without a profile or a config URL, fails saying a credential profile is needed, sending nothing', async () => {
    const subject = channel({ webhookUrl: undefined });
    expect(await subject.send('x')).toBe(false);
    await expect(subject.test()).resolves.toEqual({ success: false, message: 'Teams test failed: a credential profile of type WEBHOOK is needed (or set webhookUrl)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a wrong signature gives 401: false and a failed test without the signature', async () => {
    const logs: string[] = [];
    const url = workflowUrl(receiver.url, 'wrongSig-778899');
    expect(await channel({ webhookUrl: url }, {}, logs).send('x')).toBe(false);
    const result = await channel({ webhookUrl: url }).test();
    expect(result).toEqual({ success: false, message: expect.stringContaining('answered HTTP 401 Unauthorized') });
    expect(`${result.message}${logs.join('')}`).not.toMatch(/wrongSig-778899|teamsSig0aB9xYz12/);
  });

  it.each([400, 404, 429, 500, 502])('an HTTP %i answer gives false and a failed test', async (status) => {
    receiver.respondWith({ status, body: '{"error":{"code":"x"}}' });
    expect(await channel().send('x')).toBe(false);
    await expect(channel().test()).resolves.toMatchObject({ success: false, message: expect.stringContaining(`answered HTTP ${status}`) });
  });

  it('rejects a non-http URL at config validation', () => {
    let caught: unknown;
    try {
      channel({ webhookUrl: 'javascript:alert(1)' });
    } catch (error) {
      caught = error;
    }
    expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
  });
});
