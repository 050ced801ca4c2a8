import { ORM_DATABASE } from '@holdfast/orm-port';
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotificationLogStore, type NotificationLogInput } from '../src/index.js';
import { startNotificationServer, type NotificationServer } from './support/harness.js';

let server: NotificationServer;
let hook: HttpReceiver;

beforeEach(async () => {
  [server, hook] = await Promise.all([startNotificationServer('sqlite', { sendTimeoutMs: 400 }), startHttpReceiver()]);
  server.catalog.addChannel('hook', 'generic-webhook', { webhookUrl: `${hook.url}/hook` });
});
afterEach(async () => {
  await server.close();
  await hook.close();
});

const READ = 'perm:notifications:read';
const WRITE = 'perm:notifications:write';

function entry(overrides: Partial<NotificationLogInput>): NotificationLogInput {
  return { eventType: 'backup_success', channelId: 'hook', channelName: 'Hook', adapterId: 'generic-webhook', status: 'Success', title: 't', message: 'm', fields: [], ...overrides };
}

describe('GET /api/notifications/log', () => {
  it('pages newest first and filters by event type, status, channel and execution', async () => {
    let clock = Date.parse('2026-11-01T00:00:00Z');
    const store = new NotificationLogStore(() => server.container.resolve(ORM_DATABASE), () => new Date((clock += 1000)));
    for (let index = 0; index < 5; index += 1) await store.write(entry({ title: `ok ${index}`, executionId: `exec-${index}` }));
    await store.write(entry({ eventType: 'backup_failure', status: 'Failed', channelId: 'mail', error: 'refused', title: 'bad' }));
    const first = await server.call('GET', '/api/notifications/log?pageSize=2', { token: READ });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 6, page: 1, pageSize: 2 });
    expect(first.body.entries.map((row: { title: string }) => row.title)).toEqual(['bad', 'ok 4']);
    const third = await server.call('GET', '/api/notifications/log?pageSize=2&page=3', { token: READ });
    expect(third.body.entries.map((row: { title: string }) => row.title)).toEqual(['ok 1', 'ok 0']);
    const failed = await server.call('GET', '/api/notifications/log?status=Failed&eventType=backup_failure&channelId=mail', { token: READ });
    expect(failed.body.entries).toEqual([expect.objectContaining({ title: 'bad', error: 'refused', executionId: null, fields: [] })]);
    const byExecution = await server.call('GET', '/api/notifications/log?executionId=exec-2', { token: READ });
    expect(byExecution.body.entries.map((row: { title: string }) => row.title)).toEqual(['ok 2']);
  });

  it('needs notifications:read and rejects bad paging with 400', async () => {
    expect((await server.call('GET', '/api/notifications/log')).status).toBe(401);
    expect((await server.call('GET', '/api/notifications/log', { token: 'perm:jobs:read' })).status).toBe(403);
    const bad = await server.call('GET', '/api/notifications/log?pageSize=500&status=Maybe', { token: READ });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/pageSize|status/);
  });
});

describe('POST /api/notifications/test (rule 7)', () => {
  it('all delivered: 200 without warning, and each attempt is logged as eventType test', async () => {
    const answer = await server.call('POST', '/api/notifications/test', { token: WRITE, json: { channelIds: ['hook'] } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, message: 'Test notification sent to 1 of 1 channel(s)', results: [{ channelId: 'hook', channelName: 'generic-webhook hook', success: true }] });
    expect(JSON.parse(hook.requests[0]!.body.toString())).toMatchObject({ title: 'Test notification', eventType: 'test' });
    expect((await server.service.store.list({ page: 1, pageSize: 5, eventType: 'test' })).total).toBe(1);
  });

  it('some failed: 200 with a warning naming them; all failed: 502 with an explicit error', async () => {
    server.catalog.addChannel('stuck', 'hanging', {});
    server.settings.set('notifications.config', { globalChannels: ['hook', 'stuck'], events: { system_error: { enabled: true, channels: ['stuck'], notifyUser: 'none' } } });
    const partial = await server.call('POST', '/api/notifications/test', { token: WRITE, json: {} });
    expect(partial.status).toBe(200);
    expect(partial.body.message).toBe('Test notification sent to 1 of 2 channel(s)');
    expect(partial.body.warning).toBe('Some channels failed: hanging stuck (no answer within 0.4 s)');
    const failed = await server.call('POST', '/api/notifications/test', { token: WRITE, json: { eventType: 'system_error' } });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toBe('The test notification failed on every channel: hanging stuck (no answer within 0.4 s)');
    expect(failed.body.results).toEqual([{ channelId: 'stuck', channelName: 'hanging stuck', success: false, error: 'no answer within 0.4 s' }]);
  });

  it('unknown channels are 404, no channels at all 400, and it needs notifications:write', async () => {
    const unknown = await server.call('POST', '/api/notifications/test', { token: WRITE, json: { channelIds: ['hook', 'nope'] } });
    expect(unknown).toEqual({ status: 404, body: { error: 'Notification channel not found: nope' } });
    const none = await server.call('POST', '/api/notifications/test', { token: WRITE, json: {} });
    expect(none.status).toBe(400);
    expect(none.body.error).toContain('No notification channels to test');
    expect((await server.call('POST', '/api/notifications/test', { token: READ, json: {} })).status).toBe(403);
    expect((await server.call('POST', '/api/notifications/test', { token: WRITE, json: { channelIds: 'hook' } })).status).toBe(400);
    expect(hook.requests).toHaveLength(0);
  });
});

describe('log pruning', () => {
  it('removes entries older than notification.logRetentionDays (default 30)', async () => {
    const now = Date.now();
    const at = (daysAgo: number) => new NotificationLogStore(() => server.container.resolve(ORM_DATABASE), () => new Date(now - daysAgo * 86_400_000));
    await at(45).write(entry({ title: 'old' }));
    await at(10).write(entry({ title: 'recent' }));
    await at(0).write(entry({ title: 'today' }));
    expect(await server.service.pruner.pruneNow()).toBe(1);
    server.settings.set('notification.logRetentionDays', 5);
    expect(await server.service.pruner.pruneNow()).toBe(1);
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10 });
    expect(entries.map((row) => row.title)).toEqual(['today']);
  });
});
