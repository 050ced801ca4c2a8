// Issue 41 item 7: /metrics answered anyone without credentials and named every job and adapter. Now it serves
// loopback callers by default, any address with the configured token, or the addresses of HOLDFAST_METRICS_ALLOW.
// TRUST_PROXY=true lets a test claim a remote client address (X-Forwarded-For) from loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { startFullServer, type FullServer } from './support/full-server.js';

const TOKEN = 'scrape-token-from-env-0123456789';
const REMOTE = { 'x-forwarded-for': '203.0.113.9' };

let server: FullServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scrape(headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${server!.url}/metrics`, { headers });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

describe('who may read /metrics', () => {
  it('by default: loopback yes, a remote address 403 with nothing of the metrics', async () => {
    server = await startFullServer('sqlite', { env: { TRUST_PROXY: 'true' } });
    const local = await scrape();
    expect(local.status).toBe(200);
    expect(local.text).toContain('holdfast_queue_depth');
    const remote = await scrape(REMOTE);
    expect(remote.status).toBe(403);
    expect(remote.text).not.toContain('holdfast_');
  }, 60_000);

  it('with HOLDFAST_METRICS_TOKEN: any address with the token, no one without it', async () => {
    server = await startFullServer('sqlite', { env: { TRUST_PROXY: 'true', HOLDFAST_METRICS_TOKEN: TOKEN } });
    expect((await scrape(REMOTE)).status).toBe(401);
    expect((await scrape()).status).toBe(401);
    expect((await scrape({ ...REMOTE, authorization: 'Bearer wrong-token-0123456789abcdef' })).status).toBe(401);
    const allowed = await scrape({ ...REMOTE, authorization: `Bearer ${TOKEN}` });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('holdfast_queue_depth');
  }, 60_000);

  it('HOLDFAST_METRICS_ALLOW lists the addresses that may scrape', async () => {
    server = await startFullServer('sqlite', { env: { TRUST_PROXY: 'true', HOLDFAST_METRICS_ALLOW: '203.0.113.0/24' } });
    expect((await scrape(REMOTE)).status).toBe(200);
    expect((await scrape({ 'x-forwarded-for': '198.51.100.1' })).status).toBe(403);
  }, 60_000);

  it('a malformed HOLDFAST_METRICS_ALLOW stops the start naming the variable', async () => {
    await expect(startFullServer('sqlite', { env: { HOLDFAST_METRICS_ALLOW: 'not-an-address' } })).rejects.toThrow(/HOLDFAST_METRICS_ALLOW entry "not-an-address"/);
  }, 60_000);

  it('API answers carry the browser security headers; the web app keeps its own policy', async () => {
    server = await startFullServer('sqlite');
    const api = await fetch(`${server.url}/api/health`);
    expect(api.headers.get('x-frame-options')).toBe('DENY');
    expect(api.headers.get('referrer-policy')).toBe('no-referrer');
    expect(api.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // The built web app (apps/web/dist): its policy lets its own scripts and styles load, and still forbids framing.
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  }, 60_000);
});
