import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES } from './routes.js';
import { call, startApp, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

// Issue 41 item 7: API answers carried only X-Content-Type-Options: nothing stopped framing, referrers leaked paths.
describe('browser security headers on every API answer', () => {
  const expectLockedDown = (headers: Headers) => {
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
    const policy = headers.get('content-security-policy') ?? '';
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("default-src 'none'");
  };

  it('on a 200, a stream, a 404 and a refused request alike', async () => {
    running = await startApp({ routes: ALL_TEST_ROUTES });
    for (const [path, status] of [
      ['/api/public/text', 200],
      ['/api/public/download', 200],
      ['/api/no-such-route', 404],
      ['/api/things', 401],
      ['/api/fail/internal', 500],
    ] as const) {
      const response = await call(`${running.url}${path}`);
      expect(response.status, path).toBe(status);
      expectLockedDown(response.headers);
    }
  });
});
