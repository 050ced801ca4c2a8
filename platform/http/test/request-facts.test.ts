import { defineRoute } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApp, type RunningApp } from './support.js';

const echo = defineRoute({
  method: 'GET',
  path: '/api/echo-request',
  summary: 'Echoes what the handler learns about the request',
  access: { public: true },
  responses: { 200: { description: 'facts', schema: z.object({ secure: z.boolean(), ip: z.string() }) } },
  handler: (request) => ({ secure: request.secure, ip: request.ip }),
});

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('request facts handed to handlers', () => {
  it('marks a plain HTTP request as not secure and ignores forwarded headers without trustProxy', async () => {
    running = await startApp({ routes: [echo] });
    const response = await fetch(`${running.url}/api/echo-request`, { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' } });
    expect(await response.json()).toEqual({ secure: false, ip: '127.0.0.1' });
  });

  it('believes X-Forwarded-Proto and X-Forwarded-For behind a trusted proxy', async () => {
    running = await startApp({ routes: [echo], trustProxy: true });
    const response = await fetch(`${running.url}/api/echo-request`, { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' } });
    expect(await response.json()).toEqual({ secure: true, ip: '203.0.113.9' });
  });
});
