import { defineRoute } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument } from '../src/index.js';
import { at, call, FakeAuthenticator, registerFakes, startApp, type RunningApp } from './support.js';

// A route whose exact permission depends on the request (like adapter configs of several types).
const listEither = defineRoute({
  method: 'GET',
  path: '/api/either',
  summary: 'Needs things:read or jobs:read',
  access: { anyPermission: ['things:read', 'jobs:read'] },
  responses: { 200: { description: 'ok', schema: z.object({ ok: z.boolean() }) } },
  handler: () => ({ ok: true }),
});

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('access.anyPermission', () => {
  it('lets in a caller holding one of the permissions and refuses one holding none', async () => {
    running = await startApp({ routes: [listEither], register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator() }) });
    expect((await call(`${running.url}/api/either`)).status).toBe(401);
    expect((await call(`${running.url}/api/either`, { token: 'writer' })).status).toBe(403);
    expect((await call(`${running.url}/api/either`, { token: 'reader' })).status).toBe(200);
    expect((await call(`${running.url}/api/either`, { token: 'admin' })).status).toBe(200);
  });

  it('is stated in the OpenAPI operation', () => {
    const document = buildOpenApiDocument([listEither], { version: '1.0.0' });
    expect(at(document, 'paths', '/api/either', 'get', 'x-permission-any-of')).toEqual(['things:read', 'jobs:read']);
  });
});
