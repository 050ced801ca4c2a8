// Routes declaring `request.bodyType: 'form'` (the SAML ACS a third party's browser form posts to) read
// application/x-www-form-urlencoded; every other route stays JSON-only.
import { defineRoute, type RouteDefinition } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument } from '../src/index.js';
import { call, startApp, type RunningApp } from './support.js';

const formRoute: RouteDefinition = defineRoute({
  method: 'POST',
  path: '/api/form',
  summary: 'Echo a form',
  access: { public: true },
  request: { body: z.object({ SAMLResponse: z.string().min(1), RelayState: z.string().optional() }), bodyType: 'form' },
  responses: { 200: { description: 'Echo.', schema: z.object({ SAMLResponse: z.string(), RelayState: z.string().optional() }) } },
  handler: (request) => request.body,
});

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('form bodies', () => {
  it('parses a urlencoded form into flat strings and validates it', async () => {
    running = await startApp({ routes: [formRoute] });
    const posted = await call(`${running.url}/api/form`, {
      method: 'POST',
      body: new URLSearchParams({ SAMLResponse: 'PHNhbWw+', RelayState: '/jobs?a=1&b=2' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.status).toBe(200);
    expect(posted.body).toEqual({ SAMLResponse: 'PHNhbWw+', RelayState: '/jobs?a=1&b=2' });

    const nested = await call(`${running.url}/api/form`, {
      method: 'POST',
      body: 'SAMLResponse[a]=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(nested.status).toBe(400);
    expect(nested.body?.error).toMatch(/SAMLResponse/);
  });

  it('refuses JSON on a form route with 415 and a form over 256 KB with 413', async () => {
    running = await startApp({ routes: [formRoute] });
    const json = await call(`${running.url}/api/form`, { method: 'POST', json: { SAMLResponse: 'x' } });
    expect(json.status).toBe(415);
    expect(json.body?.error).toMatch(/application\/x-www-form-urlencoded/);
    const huge = await call(`${running.url}/api/form`, {
      method: 'POST',
      body: `SAMLResponse=${'x'.repeat(300 * 1024)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(huge.status).toBe(413);
  });

  it('documents the form media type in OpenAPI', () => {
    const document = buildOpenApiDocument([formRoute], { version: '0.0.0' }) as { paths: Record<string, { post: { requestBody: { content: Record<string, unknown> } } }> };
    expect(Object.keys(document.paths['/api/form']!.post.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
  });
});
