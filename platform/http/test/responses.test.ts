import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES, sseProbe } from './routes.js';
import { call, startApp, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('handler results', () => {
  it('sends a plain string as JSON, never as HTML', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/public/text`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.body).toBe('<script>alert(1)</script>');
  });

  it('answers 204 when a handler returns nothing', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/public/nothing`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
  });

  it('streams a routeResult stream with its headers', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await fetch(`${running.url}/api/public/download`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="data.bin"');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(64 * 1024);
    expect(bytes[0]).toBe(0);
    expect(bytes[63 * 1024]).toBe(63);
  });
});

describe('server-sent events', () => {
  it('delivers the first event at once, sends keep-alives, and stops the stream when the client leaves', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const controller = new AbortController();
    const response = await fetch(`${running.url}/api/public/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('content-encoding')).toBeNull();

    // The stream never ends by itself, so reading these chunks proves nothing buffers the response.
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes(': keep-alive')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    expect(received.startsWith('id: 1\nevent: hello\ndata: {"step":1}\n\n')).toBe(true);
    expect(received).toContain(': keep-alive\n\n');

    controller.abort();
    await expect(Promise.all([sseProbe.closed, sseProbe.aborted])).resolves.toBeDefined();
  });
});
