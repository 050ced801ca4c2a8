// Per-job notifications through the whole product: a notification template bound to a webhook (Success) and an
// email channel (Failed), real runs by the engine (pg_dump of a local database to a local directory), a real HTTP
// receiver and an in-process SMTP server, and the notification log over the API.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

interface Received {
  hooks: Array<{ url: string; body: any }>;
  mails: Array<{ to: string[]; subject: string; text: string; html: string }>;
}

async function startReceivers(received: Received): Promise<{ hookUrl: string; smtpPort: number; close(): Promise<void> }> {
  const http: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.hooks.push({ url: request.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then((mail) => {
        received.mails.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), subject: mail.subject ?? '', text: mail.text ?? '', html: typeof mail.html === 'string' ? mail.html : '' });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    hookUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    smtpPort: ((smtp as unknown as { server: Server }).server.address() as AddressInfo).port,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}

async function settled(server: FullServer, caller: Caller, executionId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}`, caller);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Polls the log until `count` entries exist (sends run after the run has finished). */
async function logEntries(server: FullServer, caller: Caller, count: number): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await server.call('GET', '/api/notifications/log', caller);
    expect(answer.status).toBe(200);
    if (answer.body.total >= count || Date.now() > deadline) return answer.body.entries;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('per-job notifications on the assembled server (sqlite)', () => {
  const received: Received = { hooks: [], mails: [] };
  let server: FullServer | undefined;
  let receivers: Awaited<ReturnType<typeof startReceivers>> | undefined;
  let localDir: string | undefined;
  const source = databaseName('notify');

  afterAll(async () => {
    await server?.close();
    await receivers?.close();
    await dropDatabase(source);
    if (localDir) await rm(localDir, { recursive: true, force: true });
  });

  it('a successful run posts to the webhook only; a failing run sends the email; the log shows both attempts', async () => {
    receivers = await startReceivers(received);
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    await seedDatabase(source, 50);
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-notify-local-'));
    const create = async (path: string, body: unknown) => {
      const answer = await server!.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const good = await create('/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const wrongRole = await create('/api/adapters', { name: 'pg wrong role', type: 'database', adapterId: 'postgres', config: { user: 'no_such_role_hf', host: '127.0.0.1' } });
    const local = await create('/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: localDir } });
    const hook = await create('/api/adapters', { name: 'ops hook', type: 'notification', adapterId: 'generic-webhook', config: { webhookUrl: receivers.hookUrl } });
    const mail = await create('/api/adapters', {
      name: 'ops mail',
      type: 'notification',
      adapterId: 'email',
      config: { host: '127.0.0.1', port: receivers.smtpPort, secure: 'none', from: 'holdfast@example.test', to: 'oncall@example.test', timeoutSeconds: 5 },
    });
    const template = await create('/api/notification-templates', {
      name: 'ops',
      bindings: [
        { channelId: hook.id, onSuccess: true, onPartial: false, onFailed: false },
        { channelId: mail.id, onSuccess: false, onPartial: false, onFailed: true },
      ],
    });
    const job = (name: string, sourceId: string) =>
      create('/api/jobs', { name, schedule: '0 3 * * *', sourceId, databases: [source], compression: 'GZIP', notificationTemplateId: template.id, destinations: [{ configId: local.id }] });
    const goodJob = await job('orders', good.id);
    const badJob = await job('orders-broken', wrongRole.id);

    const okRun = await server.call('POST', `/api/jobs/${goodJob.id}/run`, admin, {});
    const ok = await settled(server, admin, okRun.body.executionId);
    expect(ok.status).toBe('Success');
    await logEntries(server, admin, 1);
    expect(received.mails).toHaveLength(0);
    expect(received.hooks).toHaveLength(1);
    const posted = received.hooks[0]!.body;
    expect(posted).toMatchObject({ title: 'Backup succeeded: orders', eventType: 'backup_success', success: true, color: '#16a34a' });
    const fields = Object.fromEntries(posted.fields.map((field: { name: string; value: string }) => [field.name, field.value]));
    expect(fields).toMatchObject({ Job: 'orders', Status: 'Success', Path: ok.path });
    expect(fields.Size).toMatch(/^\d+(\.\d)? (B|KB)$/);

    const badRun = await server.call('POST', `/api/jobs/${badJob.id}/run`, admin, {});
    const bad = await settled(server, admin, badRun.body.executionId);
    expect(bad.status).toBe('Failed');
    const entries = await logEntries(server, admin, 2);
    expect(received.hooks).toHaveLength(1);
    expect(received.mails).toHaveLength(1);
    const sent = received.mails[0]!;
    expect(sent.to).toEqual(['oncall@example.test']);
    expect(sent.subject).toBe('[Holdfast] Backup failed: orders-broken');
    expect(sent.text).toContain('Job: orders-broken');
    expect(sent.text).toContain('Status: Failed');
    expect(sent.text).toMatch(/Error: .*no_such_role_hf/);
    expect(sent.html).toContain('Backup failed: orders-broken');

    expect(entries.map((entry) => [entry.eventType, entry.channelId, entry.status, entry.executionId])).toEqual([
      ['backup_failure', mail.id, 'Success', bad.id],
      ['backup_success', hook.id, 'Success', ok.id],
    ]);
    expect(entries[1]).toMatchObject({ channelName: 'ops hook', adapterId: 'generic-webhook' });
    const filtered = await server.call('GET', `/api/notifications/log?executionId=${bad.id}`, admin);
    expect(filtered.body).toMatchObject({ total: 1, entries: [{ channelName: 'ops mail', adapterId: 'email' }] });
  }, 120_000);
});
