import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startNotificationServer, type NotificationServer } from './support/harness.js';
import { startSmtpReceiver, type SmtpReceiver } from './support/smtp-receiver.js';

let server: NotificationServer;
let hook: HttpReceiver;
let smtp: SmtpReceiver;

beforeEach(async () => {
  [server, hook, smtp] = await Promise.all([startNotificationServer('sqlite', { sendTimeoutMs: 5_000 }), startHttpReceiver(), startSmtpReceiver()]);
  server.catalog.addChannel('hook', 'generic-webhook', { webhookUrl: `${hook.url}/hook` });
  server.catalog.addChannel('mail', 'email', { host: '127.0.0.1', port: smtp.port, secure: 'none', from: 'backup@example.test', to: 'ops@example.test', timeoutSeconds: 3 });
  server.catalog.bindings.set('job-1', [
    { channelId: 'hook', onSuccess: true, onPartial: true, onFailed: false },
    { channelId: 'mail', onSuccess: false, onPartial: false, onFailed: true },
  ]);
});
afterEach(async () => {
  await server.close();
  await Promise.all([hook.close(), smtp.close()]);
});

const outcome = { jobId: 'job-1', jobName: 'nightly', size: 1_572_864, path: 'nightly/nightly_2026.sql.gz', durationMs: 65_000 };

describe('per-job notifications through the template bindings', () => {
  it('a success goes to the channels bound to Success only, with job facts, and is logged with the execution id', async () => {
    await server.events.emit('backup_success', { ...outcome, executionId: 'exec-ok', status: 'Success' });
    await server.service.idle();
    expect(hook.requests).toHaveLength(1);
    expect(smtp.mails).toHaveLength(0);
    const body = JSON.parse(hook.requests[0]!.body.toString()) as { title: string; success: boolean; color: string; eventType: string; fields: Array<{ name: string; value: string }> };
    expect(body).toMatchObject({ title: 'Backup succeeded: nightly', success: true, color: '#16a34a', eventType: 'backup_success' });
    expect(Object.fromEntries(body.fields.map((field) => [field.name, field.value]))).toEqual({
      Job: 'nightly',
      Status: 'Success',
      Size: '1.5 MB',
      Duration: '1 min 5 s',
      Path: 'nightly/nightly_2026.sql.gz',
    });
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10 });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ eventType: 'backup_success', channelId: 'hook', channelName: 'generic-webhook hook', adapterId: 'generic-webhook', status: 'Success', executionId: 'exec-ok', error: null, color: '#16a34a' });
    expect(JSON.parse(entries[0]!.renderedPayload!)).toMatchObject({ message: 'The backup of job "nightly" succeeded.', eventType: 'backup_success' });
  });

  it('a failure goes to the Failed channel: an email with the error and an amber-free red colour', async () => {
    await server.events.emit('backup_failure', { ...outcome, executionId: 'exec-bad', status: 'Failed', size: null, path: null, error: 'role "nobody" does not exist' });
    await server.service.idle();
    expect(hook.requests).toHaveLength(0);
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.subject).toBe('[Holdfast] Backup failed: nightly');
    expect(mail.envelopeTo).toEqual(['ops@example.test']);
    expect(mail.text).toContain('Error: role "nobody" does not exist');
    expect(mail.text).toContain('Size: -');
    expect(mail.html).toContain('#dc2626');
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10, executionId: 'exec-bad' });
    expect(entries.map((entry) => [entry.channelId, entry.status, entry.color])).toEqual([['mail', 'Success', '#dc2626']]);
  });

  it('a partial run uses the Partial flag and the amber colour; a job without bindings sends nothing', async () => {
    await server.events.emit('backup_partial', { ...outcome, executionId: 'exec-partial', status: 'Partial', error: 'sftp: connection refused' });
    await server.events.emit('backup_success', { ...outcome, jobId: 'job-without-template', executionId: 'exec-other' });
    await server.service.idle();
    expect(hook.requests).toHaveLength(1);
    expect(JSON.parse(hook.requests[0]!.body.toString())).toMatchObject({ color: '#f59e0b', success: false, eventType: 'backup_partial' });
    expect((await server.service.store.list({ page: 1, pageSize: 10 })).total).toBe(1);
  });

  it('a failing channel is logged as Failed with its reason, and the other channels still get theirs', async () => {
    hook.respondWith({ status: 500, body: 'nope' });
    server.catalog.bindings.set('job-1', [
      { channelId: 'hook', onSuccess: false, onPartial: false, onFailed: true },
      { channelId: 'mail', onSuccess: false, onPartial: false, onFailed: true },
    ]);
    await server.events.emit('backup_failure', { ...outcome, executionId: 'exec-2', error: 'x' });
    await server.service.idle();
    expect(smtp.mails).toHaveLength(1);
    const { entries } = await server.service.store.list({ page: 1, pageSize: 10, status: 'Failed' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ channelId: 'hook', status: 'Failed' });
    expect(entries[0]!.error).toContain('HTTP 500');
  });
});
