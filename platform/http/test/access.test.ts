import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES } from './routes.js';
import {
  call,
  FakeAccessPolicy,
  FakeAuthenticator,
  FakeRateLimiter,
  registerFakes,
  startApp,
  type CallLog,
  type RunningApp,
} from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('authentication', () => {
  it('answers 401 on a non-public route when no authenticator is registered', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/things`, { token: 'admin' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'Unauthorized' });
  });

  it('answers 401 when the authenticator finds no identity, and passes the identity on when it does', async () => {
    const authenticator = new FakeAuthenticator();
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator }) });
    expect((await call(`${running.url}/api/things`)).body).toEqual({ error: 'Unauthorized' });
    expect((await call(`${running.url}/api/things`, { token: 'wrong' })).status).toBe(401);

    const ok = await call(`${running.url}/api/things`, { token: 'reader' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ userId: 'u-reader' });

    const byCookie = await call(`${running.url}/api/things`, { headers: { cookie: 'sid=writer' } });
    expect(byCookie.body).toEqual({ userId: 'u-writer' });
    const seen = authenticator.requests.at(-1);
    expect(seen?.method).toBe('GET');
    expect(seen?.path).toBe('/api/things');
    expect(seen?.ip).toBe('127.0.0.1');
  });

  it('never consults the authenticator on public routes', async () => {
    const authenticator = new FakeAuthenticator();
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator }) });
    const response = await call(`${running.url}/api/public/echo?page=2`, { token: 'admin' });
    expect(response.status).toBe(200);
    expect(authenticator.requests).toHaveLength(0);
  });
});

describe('permission check', () => {
  it('without an access policy allows super administrators and holders of the permission only', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator() }) });
    const thing = { name: 'x' };
    expect((await call(`${running.url}/api/things`, { method: 'POST', token: 'admin', json: thing })).status).toBe(201);
    expect((await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: thing })).status).toBe(201);
    const denied = await call(`${running.url}/api/things`, { method: 'POST', token: 'reader', json: thing });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'Forbidden' });
  });

  it('asks the access policy with the scoped resource taken from the path', async () => {
    const policy = new FakeAccessPolicy([], ['job-7']);
    running = await startApp({
      routes: ALL_TEST_ROUTES,
      register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator(), policy }),
    });
    const allowed = await call(`${running.url}/api/jobs/job-7`, { token: 'reader' });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual({ id: 'job-7' });
    const otherJob = await call(`${running.url}/api/jobs/job-8`, { token: 'reader' });
    expect(otherJob.status).toBe(403);
    expect(policy.questions).toEqual([
      { userId: 'u-reader', permission: 'jobs:read', resource: { type: 'job', id: 'job-7' } },
      { userId: 'u-reader', permission: 'jobs:read', resource: { type: 'job', id: 'job-8' } },
    ]);
  });

  it('checks the permission before validating, so a caller without rights learns nothing about the input rules', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator() }) });
    const bad = { name: 42 };
    expect((await call(`${running.url}/api/things`, { method: 'POST', token: 'reader', json: bad })).status).toBe(403);
    expect((await call(`${running.url}/api/things`, { method: 'POST', json: bad })).status).toBe(401);
    expect((await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: bad })).status).toBe(400);
  });
});

describe('rate limiting and step order', () => {
  it('runs rate limit -> authenticate -> authorise -> validate, and stops at the first refusal', async () => {
    const calls: CallLog = [];
    const limiter = new FakeRateLimiter(calls, 2);
    running = await startApp({
      routes: ALL_TEST_ROUTES,
      register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator(calls), policy: new FakeAccessPolicy(calls), limiter }),
    });
    const invalid = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: '' } });
    expect(invalid.status).toBe(400);
    expect(calls).toEqual(['rate-limit', 'authenticate', 'authorise']);

    calls.length = 0;
    expect((await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'ok' } })).status).toBe(201);
    calls.length = 0;
    const limited = await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'ok' } });
    expect(limited.status).toBe(429);
    expect(calls).toEqual(['rate-limit']);
  });

  it('answers 429 with Retry-After and RateLimit headers, and sends the RateLimit headers on allowed responses too', async () => {
    const limiter = new FakeRateLimiter([], 1, 42_500);
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { limiter }) });
    const first = await call(`${running.url}/api/public/echo`);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('1');
    expect(first.headers.get('ratelimit-remaining')).toBe('0');
    expect(first.headers.get('ratelimit-reset')).toBe('43');
    expect(first.headers.get('retry-after')).toBeNull();

    const second = await call(`${running.url}/api/public/echo`);
    expect(second.status).toBe(429);
    expect(second.body).toEqual({ error: 'Too many requests, retry in 43 seconds' });
    expect(second.headers.get('retry-after')).toBe('43');
    expect(second.headers.get('ratelimit-limit')).toBe('1');
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    expect(second.headers.get('ratelimit-reset')).toBe('43');
  });

  it('charges GET to api, other methods to mutation, honours a route class, and skips rateLimit none', async () => {
    const limiter = new FakeRateLimiter([], 100);
    running = await startApp({
      routes: ALL_TEST_ROUTES,
      register: (c) => registerFakes(c, { limiter, authenticator: new FakeAuthenticator() }),
    });
    await call(`${running.url}/api/public/echo`);
    await call(`${running.url}/api/things`, { method: 'POST', token: 'writer', json: { name: 'a' } });
    await call(`${running.url}/api/public/loose`, { method: 'POST', json: {} });
    const none = await call(`${running.url}/api/public/nothing`, { method: 'DELETE' });
    expect(none.headers.get('ratelimit-limit')).toBeNull();
    expect(limiter.consumed).toEqual([
      { key: '127.0.0.1', kind: 'api' },
      { key: '127.0.0.1', kind: 'mutation' },
      { key: '127.0.0.1', kind: 'auth' },
    ]);
  });

  it('counts a browser session\'s reads per user (class browser); keys, anonymous callers and bad cookies per IP (issue 47)', async () => {
    const calls: string[] = [];
    const limiter = new FakeRateLimiter(calls, 100);
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { limiter, authenticator: new FakeAuthenticator(calls) }) });
    expect((await call(`${running.url}/api/things`, { headers: { cookie: 'sid=admin' } })).status).toBe(200);
    // The session is known before it is counted: that is what lets it have its own budget.
    expect(calls).toEqual(['authenticate', 'rate-limit']);
    expect((await call(`${running.url}/api/things`, { token: 'reader' })).status).toBe(200);
    expect((await call(`${running.url}/api/things`, { headers: { cookie: 'sid=forged' } })).status).toBe(401);
    await call(`${running.url}/api/public/echo`, { headers: { cookie: 'sid=admin' } });
    await call(`${running.url}/api/things`, { method: 'POST', json: { name: 'a' }, headers: { cookie: 'sid=admin' } });
    expect(limiter.consumed).toEqual([
      { key: 'user:u-admin', kind: 'browser' },
      { key: '127.0.0.1', kind: 'api' },
      { key: '127.0.0.1', kind: 'api' },
      { key: '127.0.0.1', kind: 'api' },
      { key: '127.0.0.1', kind: 'mutation' },
    ]);
  });

  it('believes X-Forwarded-For only with trustProxy, and then only the entry the proxy added', async () => {
    const untrusting = new FakeRateLimiter([], 100);
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { limiter: untrusting }) });
    await call(`${running.url}/api/public/echo`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(untrusting.consumed.map((entry) => entry.key)).toEqual(['127.0.0.1']);
    await running.close();

    const trusting = new FakeRateLimiter([], 100);
    running = await startApp({ routes: ALL_TEST_ROUTES, trustProxy: true, register: (c) => registerFakes(c, { limiter: trusting }) });
    await call(`${running.url}/api/public/echo`, { headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' } });
    expect(trusting.consumed.map((entry) => entry.key)).toEqual(['203.0.113.9']);
  });
});
