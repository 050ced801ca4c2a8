import { UnauthorizedError, type Authenticator } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES } from './routes.js';
import { call, registerFakes, startApp, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('error mapping over HTTP', () => {
  it('hides an unexpected error behind 500 Internal server error and logs it with its stack server-side', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/fail/internal`);
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: 'Internal server error' });
    expect(response.text).not.toMatch(/hunter2|postgres:|at .*\.ts/);

    const logged = running.logs.find((line) => line.msg === 'request failed');
    const err = logged?.err as { message?: string; stack?: string } | undefined;
    expect(err?.message).toMatch(/connect failed/);
    expect(err?.stack).toMatch(/routes\.ts/);
    expect(logged?.level).toBe(50);
  });

  it.each([
    ['NOT_FOUND', 404],
    ['CONFIG', 400],
    ['UNSUPPORTED', 400],
    ['AUTH', 502],
    ['TRANSIENT', 503],
    ['ABORTED', 409],
    ['LOCKED', 409],
  ])('maps AdapterError %s to %i with the adapter-prefixed message', async (code, status) => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/fail/adapter/${code}`);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ error: '[storage-sftp] host refused' });
  });

  it('sends a kernel HttpError with its status, message and details', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/fail/conflict`);
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ error: 'Name already taken', details: { field: 'name' } });
  });

  it('keeps the reason of an UnauthorizedError in the log and out of the response', async () => {
    const authenticator: Authenticator = {
      authenticate: async () => {
        throw new UnauthorizedError('expired');
      },
    };
    running = await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator }) });
    const response = await call(`${running.url}/api/things`, { token: 'x' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'Unauthorized' });
    expect(running.logs.find((line) => line.msg === 'request rejected')?.reason).toBe('expired');
  });
});

describe('request log and request id', () => {
  it('writes one line per request with method, path, status, duration and id, and no credentials or query', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const response = await call(`${running.url}/api/public/echo?page=2&token=download-secret`, {
      headers: { authorization: 'Bearer svc_key_topsecret', cookie: 'sid=session-secret' },
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);

    await expect.poll(() => running?.logs.filter((line) => line.msg === 'request').length).toBe(1);
    const line = running.logs.find((entry) => entry.msg === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/api/public/echo', status: 200, requestId });
    expect(typeof line?.durationMs).toBe('number');
    const everything = JSON.stringify(running.logs);
    expect(everything).not.toMatch(/download-secret|topsecret|session-secret|page=2/);
  });

  it('keeps a well-formed incoming X-Request-Id and replaces a hostile one', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    const kept = await call(`${running.url}/api/public/echo`, { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc.123');
    const replaced = await call(`${running.url}/api/public/echo`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id\twith spaces');
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs 5xx request lines at error level', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    await call(`${running.url}/api/fail/adapter/TRANSIENT`);
    await expect.poll(() => running?.logs.find((line) => line.msg === 'request')?.status).toBe(503);
    expect(running.logs.find((line) => line.msg === 'request')?.level).toBe(50);
  });
});
