import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES } from './routes.js';
import { call, FakeAuthenticator, registerFakes, startApp, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function startWithAuth(bodyLimitBytes?: number): Promise<RunningApp> {
  return startApp({
    routes: ALL_TEST_ROUTES,
    register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator() }),
    ...(bodyLimitBytes ? { bodyLimitBytes } : {}),
  });
}

describe('request validation', () => {
  it('answers 400 naming every failing field path in the message and in issues', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/things`, {
      method: 'POST',
      token: 'writer',
      json: { name: 42, tags: ['ok', 7], size: { bytes: -1 } },
    });
    expect(response.status).toBe(400);
    expect(response.body?.issues).toEqual([
      { path: 'body.name', message: 'expected string, received number' },
      { path: 'body.tags[1]', message: 'expected string, received number' },
      { path: 'body.size.bytes', message: expect.stringContaining('>=0') },
    ]);
    expect(response.body?.error).toMatch(
      /^Invalid request: body\.name: expected string, received number; body\.tags\[1\]: expected string, received number; body\.size\.bytes: /,
    );
  });

  it('reports a missing body on a route that requires one', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer' });
    expect(response.status).toBe(400);
    expect(response.body?.issues).toEqual([{ path: 'body', message: 'expected object, received undefined' }]);
  });

  it('hands the handler parsed values: defaults applied, query strings coerced', async () => {
    running = await startWithAuth();
    const created = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'disk', extra: 1 } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/things/1');
    expect(created.body).toEqual({ name: 'disk', tags: [], createdBy: 'u-writer' });

    const echoed = await call(`${running.url}/api/public/echo?page=3&verbose=false`);
    expect(echoed.body).toEqual({ query: { page: 3, verbose: false } });
    const defaults = await call(`${running.url}/api/public/echo`);
    expect(defaults.body).toEqual({ query: { page: 1 } });
  });

  it('validates query and path parameters with their own prefixes', async () => {
    running = await startWithAuth();
    const query = await call(`${running.url}/api/public/echo?page=zero`);
    expect(query.status).toBe(400);
    expect(query.body?.issues).toEqual([{ path: 'query.page', message: 'expected number, received NaN' }]);

    const params = await call(`${running.url}/api/jobs/bogus`, { token: 'admin' });
    expect(params.status).toBe(400);
    expect(params.body).toEqual({
      error: 'Invalid request: params.id: must look like job-<number>',
      issues: [{ path: 'params.id', message: 'must look like job-<number>' }],
    });
  });
});

describe('JSON bodies', () => {
  it('answers 400 to malformed JSON without echoing the body', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/things`, {
      method: 'POST',
      token: 'writer',
      body: '{"name": "secret-value",',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'Malformed JSON in request body' });
  });

  it('answers 413 to a body over the limit, and the default limit is 1 MB', async () => {
    running = await startWithAuth(1024);
    const small = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'x'.repeat(2000) } });
    expect(small.status).toBe(413);
    expect(small.body).toEqual({ error: 'Request body too large: the limit is 1 KB' });
    await running.close();

    running = await startWithAuth();
    const underDefault = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'x'.repeat(1000 * 1000) } });
    expect(underDefault.status).toBe(201);
    const overDefault = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'x'.repeat(1024 * 1024) } });
    expect(overDefault.status).toBe(413);
    expect(overDefault.body).toEqual({ error: 'Request body too large: the limit is 1 MB' });
  });

  it('answers 415 to a body that is not JSON', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/things`, {
      method: 'POST',
      token: 'writer',
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(response.body?.error).toMatch(/application\/json/);
  });

  it('refuses __proto__, constructor and prototype keys and leaves Object.prototype untouched', async () => {
    running = await startWithAuth();
    const viaProto = await call(`${running.url}/api/public/loose`, {
      method: 'POST',
      body: '{"a": 1, "__proto__": {"isPolluted": true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(viaProto.status).toBe(400);
    expect(viaProto.body?.error).toMatch(/__proto__/);

    const viaConstructor = await call(`${running.url}/api/public/loose`, {
      method: 'POST',
      json: { nested: [{ constructor: { isPolluted: true } }], prototype: {} },
    });
    expect(viaConstructor.status).toBe(400);
    expect(viaConstructor.body?.issues).toEqual([
      { path: 'body.nested[0].constructor', message: 'forbidden key' },
      { path: 'body.prototype', message: 'forbidden key' },
    ]);

    const viaQuery = await call(`${running.url}/api/public/echo?__proto__=1`);
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.body?.issues).toEqual([{ path: 'query.__proto__', message: 'forbidden key' }]);

    const clean = await call(`${running.url}/api/public/loose`, { method: 'POST', json: { a: 1 } });
    expect(clean.body).toEqual({ keys: ['a'], isPolluted: false });
    expect(({} as Record<string, unknown>).isPolluted).toBeUndefined();
  });
});

describe('unknown paths and methods', () => {
  it('answers 404 JSON for an unknown /api path', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/nope/deeper`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'Not found' });
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('answers 405 with Allow for a known path and a wrong method, and lists methods on OPTIONS', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/api/things`, { method: 'DELETE', token: 'admin' });
    expect(response.status).toBe(405);
    expect(response.body?.error).toMatch(/^Method not allowed/);
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);

    const options = await call(`${running.url}/api/things`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toMatch(/POST/);
  });

  it('leaves paths outside /api to later middleware', async () => {
    running = await startWithAuth();
    const response = await call(`${running.url}/index.html`);
    expect(response.status).toBe(404);
    expect(response.body).toBeUndefined();
    expect(response.text).toBe('Not Found');
  });
});
