import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NotificationLogInput } from '../src/index.js';
import { startNotificationServer, type NotificationServer } from './support/harness.js';
import { startSmtpReceiver, type SmtpReceiver } from './support/smtp-receiver.js';

let server: NotificationServer;
let hook: HttpReceiver;
let smtp: SmtpReceiver;

// Real channels get a bound far above their delivery time on a loaded machine; the hanging-channel test sets a short one.
async function setUp(options: Parameters<typeof startNotificationServer>[1] = { sendTimeoutMs: 5_000 }): Promise<void> {
  [server, hook, smtp] = await Promise.all([startNotificationServer('sqlite', options), startHttpReceiver(), startSmtpReceiver()]);
  server.catalog.addChannel('hook', 'generic-webhook', { webhookUrl: `${hook.url}/hook` });
  server.catalog.addChannel('hook2', 'generic-webhook', { webhookUrl: `${hook.url}/second` });
  server.catalog.addChannel('mail', 'email', { host: '127.0.0.1', port: smtp.port, secure: 'none', from: 'backup@example.test', to: 'ops@example.test', timeoutSeconds: 3 });
}
afterEach(async () => {
  await server.close();
  await Promise.all([hook.close(), smtp.close()]);
});

const login = { userName: 'alice', email: 'alice@example.test', timestamp: '2026-11-21T10:00:00.000Z' };
const restore = { executionId: 'exec-r', file: 'db/nightly.sql.gz', storageId: 'local-1', targetSourceId: 'pg-1' };

async function settle(): Promise<void> {
  await server.service.idle();
}

describe('system dispatch rules', () => {
  beforeEach(() => setUp());

  it('rule 1: defaults apply when an event is not configured (restore on, sign-in off), and configured values win', async () => {
    server.settings.set('notifications.config', { globalChannels: ['hook'], events: {} });
    await server.events.emit('user_login', login);
    await server.events.emit('restore_failure', { ...restore, error: 'disk full' });
    await settle();
    expect(hook.requests.map((request) => JSON.parse(request.body.toString()).eventType)).toEqual(['restore_failure']);
    server.settings.set('notifications.config', { globalChannels: ['hook'], events: { restore_failure: { enabled: false, channels: null, notifyUser: 'none' }, user_login: { enabled: true, channels: null, notifyUser: 'none' } } });
    await server.events.emit('restore_failure', restore);
    await server.events.emit('user_login', login);
    await settle();
    expect(hook.requests.map((request) => JSON.parse(request.body.toString()).eventType)).toEqual(['restore_failure', 'user_login']);
  });

  it('rule 2: the event-level channel list replaces the global one; null falls back to global', async () => {
    server.settings.set('notifications.config', {
      globalChannels: ['hook'],
      events: { restore_complete: { enabled: true, channels: ['hook2'], notifyUser: 'none' }, system_error: { enabled: true, channels: null, notifyUser: 'none' } },
    });
    await server.events.emit('restore_complete', restore);
    await settle();
    expect(hook.requests.map((request) => request.url)).toEqual(['/second']);
    await server.events.emit('system_error', { message: 'the scheduler stopped', source: 'scheduler' });
    await settle();
    expect(hook.requests.map((request) => request.url)).toEqual(['/second', '/hook']);
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10, eventType: 'restore_complete' });
    expect(entries[0]).toMatchObject({ channelId: 'hook2', executionId: 'exec-r', status: 'Success', title: 'Restore completed' });
  });

  it('rules 4-5, notifyUser "also": every channel as configured, plus the email channels addressed to the user', async () => {
    server.settings.set('notifications.config', { globalChannels: ['hook', 'mail'], events: { user_created: { enabled: true, channels: null, notifyUser: 'also' } } });
    await server.events.emit('user_created', login);
    await settle();
    expect(hook.requests).toHaveLength(1);
    const log = JSON.stringify((await server.service.store.list({ page: 1, pageSize: 10 })).entries.map((entry) => [entry.status, entry.error]));
    expect(smtp.mails.map((mail) => mail.envelopeTo[0]).sort(), log).toEqual(['alice@example.test', 'ops@example.test']);
    expect(smtp.mails[0]!.subject).toBe('[Holdfast] New user: alice');
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10 });
    expect(entries).toHaveLength(3);
    expect(entries.filter((entry) => JSON.parse(entry.renderedPayload!).recipient === 'alice@example.test')).toHaveLength(1);
  });

  it('notifyUser "only": no configured delivery, only the user through email-kind channels', async () => {
    server.settings.set('notifications.config', { globalChannels: ['hook', 'mail'], events: { user_login: { enabled: true, channels: null, notifyUser: 'only' } } });
    await server.events.emit('user_login', login);
    await settle();
    expect(hook.requests).toHaveLength(0);
    expect(smtp.mails.map((mail) => mail.envelopeTo)).toEqual([['alice@example.test']]);
    expect(smtp.mails[0]!.text).toContain('Email: alice@example.test');
  });

  it('notifyUser is ignored outside user events (restore goes to the channels as configured)', async () => {
    server.settings.set('notifications.config', { globalChannels: ['mail'], events: { restore_complete: { enabled: true, channels: null, notifyUser: 'only' } } });
    await server.events.emit('restore_complete', restore);
    await settle();
    expect(smtp.mails.map((mail) => mail.envelopeTo)).toEqual([['ops@example.test']]);
  });

  it('a database downgrade is labelled and carries the warning colour', async () => {
    server.settings.set('notifications.config', { globalChannels: ['hook'], events: {} });
    await server.events.emit('db_version_changed', { configId: 'pg-1', configName: 'main db', previousVersion: '16.2', newVersion: '15.6', isDowngrade: true });
    await settle();
    expect(JSON.parse(hook.requests[0]!.body.toString())).toMatchObject({ title: 'Database version downgrade: main db', color: '#f59e0b' });
  });
});

describe('rule 6: the send bound', () => {
  beforeEach(() => setUp({ sendTimeoutMs: 400 }));

  it('rule 6: a channel that hangs counts as failed after the send bound, the others are delivered', async () => {
    server.catalog.addChannel('stuck', 'hanging', {});
    server.settings.set('notifications.config', { globalChannels: ['stuck', 'hook'], events: {} });
    const started = Date.now();
    await server.events.emit('system_error', { message: 'boom' });
    await settle();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(hook.requests).toHaveLength(1);
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10, channelId: 'stuck' });
    expect(entries[0]).toMatchObject({ status: 'Failed', error: 'no answer within 0.4 s' });
  });
});

describe('rule 6: the log', () => {
  it('a failing log write does not block delivery', async () => {
    const attempts: NotificationLogInput[] = [];
    await setUp({
      sendTimeoutMs: 5_000,
      logWriter: {
        async write(entry) {
          attempts.push(entry);
          throw new Error('database is locked');
        },
      },
    });
    server.settings.set('notifications.config', { globalChannels: ['hook', 'mail'], events: {} });
    await server.events.emit('restore_failure', { ...restore, error: 'x' });
    await settle();
    expect(hook.requests).toHaveLength(1);
    expect(smtp.mails).toHaveLength(1);
    expect(attempts.map((entry) => entry.status)).toEqual(['Success', 'Success']);
  });
});
