import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger, startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import definition from '../src/index.js';

let receiver: HttpReceiver;

beforeEach(async () => {
  receiver = await startHttpReceiver();
});
afterEach(async () => {
  await receiver.close();
});

function channel(config: Record<string, unknown>, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(definition, { webhookUrl: `${receiver.url}/hook`, ...config }, { logger: recordingLogger(logs) });
}

function configError(config: Record<string, unknown>): string {
  try {
    channel(config);
  } catch (error) {
    if (isAdapterError(error) && error.code === 'CONFIG') return error.message;
    throw error;
  }
  throw new Error('config was accepted');
}

describe('generic webhook requests against a local receiver', () => {
  it('POSTs the default JSON payload with content type and user agent', async () => {
    expect(await channel({}).send('Backup done', { success: true, title: 'nightly', eventType: 'backup_success' })).toBe(true);
    const [request] = receiver.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/hook');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe('Holdfast');
    const body = JSON.parse(request?.body.toString() ?? '') as Record<string, unknown>;
    expect(body).toMatchObject({ title: 'nightly', message: 'Backup done', success: true, color: '#22c55e', eventType: 'backup_success', fields: [] });
    expect(Date.parse(body.timestamp as string)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('uses method, content type, auth header and custom headers; the dedicated fields win', async () => {
    const sent = await channel({
      method: 'PATCH',
      contentType: 'application/vnd.holdfast+json',
      authHeader: 'Bearer abc',
      customHeaders: 'X-Team: ops\n\n  X-Trace : 42  \nAuthorization: Basic nope',
    }).send('hi');
    expect(sent).toBe(true);
    const headers = receiver.requests[0]?.headers;
    expect(receiver.requests[0]?.method).toBe('PATCH');
    expect(headers?.['content-type']).toBe('application/vnd.holdfast+json');
    expect(headers?.authorization).toBe('Bearer abc');
    expect(headers?.['x-team']).toBe('ops');
    expect(headers?.['x-trace']).toBe('42');
  });

  it('renders the payload template with the notification context', async () => {
    const template = '{"text": "{{title}}: {{message}}", "ok": {{success}}, "rows": {{fields}}, "colour": "{{color}}"}';
    await channel({ payloadTemplate: template }).send('db "app" dumped', {
      success: true,
      title: 'Backup',
      color: '#00ff00',
      fields: [{ name: 'Size', value: '12 MB' }],
    });
    expect(JSON.parse(receiver.requests[0]?.body.toString() ?? '')).toEqual({
      text: 'Backup: db "app" dumped',
      ok: true,
      rows: [{ name: 'Size', value: '12 MB', inline: false }],
      colour: '#00ff00',
    });
  });

  it('resolves false on a non-2xx answer and logs the status without secrets', async () => {
    receiver.respondWith({ status: 503, body: 'down' });
    const logs: string[] = [];
    expect(await channel({ authHeader: 'Bearer very-secret' }, logs).send('x')).toBe(false);
    expect(logs.join('\n')).toContain('HTTP 503');
    expect(logs.join('\n')).not.toContain('very-secret');
  });

  it('reports the HTTP status in test results', async () => {
    await expect(channel({}).test()).resolves.toEqual({ success: true, message: 'Webhook answered HTTP 200 OK' });
    expect(JSON.parse(receiver.requests[0]?.body.toString() ?? '')).toMatchObject({ eventType: 'test', title: 'Holdfast test notification' });
    receiver.respondWith({ status: 404 });
    await expect(channel({}).test()).resolves.toEqual({ success: false, message: expect.stringContaining('answered HTTP 404 Not Found') });
  });

  it('rejects malformed custom header lines at config validation, by line number', () => {
    const message = configError({ customHeaders: 'X-Ok: 1\nno colon here\nBad Name: x\nContent-Length: 5' });
    expect(message).toContain('line 2: expected "Key: Value"');
    expect(message).toContain('line 3: "Bad Name" is not a valid header name');
    expect(message).toContain('line 4: Content-Length is set by Holdfast');
  });

  it('rejects invalid templates, non-http URLs and unknown methods at config validation', () => {
    expect(configError({ payloadTemplate: '{"a": {{nope}}}' })).toContain('unknown placeholder {{nope}}');
    expect(configError({ payloadTemplate: '{"a": {{title}}' })).toContain('does not render to valid JSON');
    expect(configError({ webhookUrl: 'file:///etc/passwd' })).toContain('webhookUrl: must be an http(s) URL');
    expect(configError({ method: 'DELETE' })).toContain('method:');
  });
});
