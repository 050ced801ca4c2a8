import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchKeepingCredentialsHome, isSameServer } from '../src/http-redirects.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server on `host` that records requests and answers with `answer(request)`. */
async function serve(host: string, answer: (seen: Seen) => { status: number; headers?: Record<string, string> }): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(request);
      const { status, headers } = answer(request);
      res.writeHead(status, headers).end(status === 200 ? 'arrived' : '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, seen };
}

const SECRET_HEADERS = { authorization: 'Bearer tok-secret-1', 'x-api-key': 'key-secret-2', 'x-gotify-key': 'gotify-secret-3', cookie: 'sid=cookie-secret-4' };

// Issue 41 item 6: a webhook's X-Api-Key and Gotify's X-Gotify-Key followed a 302/307 to 127.0.0.2; the 307 re-sent the body.
describe('fetchKeepingCredentialsHome', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`${status} to another host: no credential header and no body arrive there`, async () => {
      const second = await serve('127.0.0.2', () => ({ status: 200 }));
      const first = await serve('127.0.0.1', (request) => ({ status, headers: { location: `${second.url}${request.url}` } }));
      const response = await fetchKeepingCredentialsHome(`${first.url}/hook?x=1`, {
        method: 'POST',
        headers: { ...SECRET_HEADERS, 'content-type': 'application/json', 'user-agent': 'Holdfast' },
        body: '{"token":"body-secret-5"}',
      });
      await response.body?.cancel();
      expect(first.seen[0]!.headers['x-api-key']).toBe('key-secret-2');
      const leaked = JSON.stringify(second.seen);
      for (const secret of ['tok-secret-1', 'key-secret-2', 'gotify-secret-3', 'cookie-secret-4', 'body-secret-5']) expect(leaked).not.toContain(secret);
      if (status === 307 || status === 308) {
        // The body would have to travel: not followed, the redirect is the answer.
        expect(response.status).toBe(status);
        expect(second.seen).toHaveLength(0);
      } else {
        expect(response.status).toBe(200);
        expect(second.seen).toEqual([expect.objectContaining({ method: 'GET', url: '/hook?x=1', body: '' })]);
        expect(second.seen[0]!.headers['user-agent']).toBe('Holdfast');
      }
    });
  }

  it('a GET to another host keeps its range and drops its credentials (a download link on a CDN)', async () => {
    const second = await serve('127.0.0.2', () => ({ status: 200 }));
    const first = await serve('127.0.0.1', () => ({ status: 302, headers: { location: `${second.url}/blob` } }));
    const response = await fetchKeepingCredentialsHome(`${first.url}/content`, { headers: { ...SECRET_HEADERS, range: 'bytes=0-9' } });
    expect(await response.text()).toBe('arrived');
    expect(second.seen[0]!.headers.range).toBe('bytes=0-9');
    expect(second.seen[0]!.headers.authorization).toBeUndefined();
    expect(second.seen[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('within the same server a 307 keeps method, headers and body', async () => {
    const server = await serve('127.0.0.1', (request) => (request.url === '/old' ? { status: 307, headers: { location: '/new' } } : { status: 200 }));
    const response = await fetchKeepingCredentialsHome(`${server.url}/old`, { method: 'POST', headers: { 'x-api-key': 'key-secret-2' }, body: 'payload' });
    expect(response.status).toBe(200);
    expect(server.seen[1]).toEqual(expect.objectContaining({ method: 'POST', url: '/new', body: 'payload' }));
    expect(server.seen[1]!.headers['x-api-key']).toBe('key-secret-2');
  });

  it('once stripped, a request that comes back to the first host stays stripped', async () => {
    let home = '';
    const second = await serve('127.0.0.2', () => ({ status: 302, headers: { location: `${home}/back` } }));
    const first = await serve('127.0.0.1', (request) => (request.url === '/back' ? { status: 200 } : { status: 302, headers: { location: `${second.url}/away` } }));
    home = first.url;
    const response = await fetchKeepingCredentialsHome(`${first.url}/start`, { headers: SECRET_HEADERS });
    expect(response.status).toBe(200);
    expect(first.seen[1]!.url).toBe('/back');
    expect(first.seen[1]!.headers['x-api-key']).toBeUndefined();
  });

  it('a stream body is never replayed, even to the same server', async () => {
    const server = await serve('127.0.0.1', () => ({ status: 307, headers: { location: '/again' } }));
    const body = new ReadableStream({ start: (controller) => (controller.enqueue(new TextEncoder().encode('bytes')), controller.close()) });
    const response = await fetchKeepingCredentialsHome(`${server.url}/put`, { method: 'PUT', body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(307);
    expect(server.seen).toHaveLength(1);
  });

  it('gives up after 20 redirects', async () => {
    const server = await serve('127.0.0.1', () => ({ status: 302, headers: { location: '/loop' } }));
    await expect(fetchKeepingCredentialsHome(`${server.url}/loop`)).rejects.toThrow(/more than 20 redirects/);
  });

  it('passes a caller\'s redirect: manual through', async () => {
    const server = await serve('127.0.0.1', () => ({ status: 302, headers: { location: '/elsewhere' } }));
    const response = await fetchKeepingCredentialsHome(`${server.url}/x`, { redirect: 'manual' });
    expect(response.status).toBe(302);
  });

  it('isSameServer: same origin, or an upgrade to https on the same host name', () => {
    const at = (url: string) => new URL(url);
    expect(isSameServer(at('http://a.example/x'), at('http://a.example/y'))).toBe(true);
    expect(isSameServer(at('http://a.example/x'), at('https://a.example/y'))).toBe(true);
    expect(isSameServer(at('https://a.example/x'), at('http://a.example/y'))).toBe(false);
    expect(isSameServer(at('http://a.example/x'), at('http://a.example:8080/y'))).toBe(false);
    expect(isSameServer(at('http://a.example/x'), at('http://b.example/y'))).toBe(false);
    expect(isSameServer(at('http://127.0.0.1:80/x'), at('http://127.0.0.2/y'))).toBe(false);
  });
});
