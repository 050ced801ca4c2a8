// The web app's static files (apps/server/src/web-app.ts): the precompressed sibling the client accepts, with
// Content-Encoding and Vary, the plain file otherwise; cache headers by kind (issue 47: 1.5 MB went out plain).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createServer, request, type Server } from 'node:http';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveWebApp } from '../src/web-app.js';

const SCRIPT = 'console.log("holdfast");\n'.repeat(200);

/** A raw GET (fetch would decode the body and hide what was sent). */
function get(url: string, acceptEncoding: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { 'accept-encoding': acceptEncoding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('web app files by Accept-Encoding', () => {
  let root: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'holdfast-web-encoding-'));
    await mkdir(join(root, 'assets'));
    await writeFile(join(root, 'index.html'), '<!doctype html><title>Holdfast</title>');
    await writeFile(join(root, 'assets', 'app-1234.js'), SCRIPT);
    await writeFile(join(root, 'assets', 'app-1234.js.br'), brotliCompressSync(SCRIPT));
    await writeFile(join(root, 'assets', 'app-1234.js.gz'), gzipSync(SCRIPT));
    const app = new Koa();
    app.use(serveWebApp(root));
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  it('sends brotli first, then gzip, then the plain file; always with Vary and the immutable cache header', async () => {
    const brotli = await get(`${base}/assets/app-1234.js`, 'gzip, deflate, br');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.body.equals(brotliCompressSync(SCRIPT))).toBe(true);
    expect(brotli.headers['content-length']).toBe(String(brotli.body.length));
    expect(brotli.headers.vary).toMatch(/Accept-Encoding/);
    expect(brotli.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotli.headers['content-type']).toMatch(/^text\/javascript/);

    const gzip = await get(`${base}/assets/app-1234.js`, 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.body.equals(gzipSync(SCRIPT))).toBe(true);

    // q=0 refuses an encoding.
    const plain = await get(`${base}/assets/app-1234.js`, 'br;q=0, identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);
  });

  it('sends index.html (no variants) plain and no-cache, for client-side routes too', async () => {
    const shell = await get(`${base}/jobs/42`, 'br, gzip');
    expect(shell.headers['content-encoding']).toBeUndefined();
    expect(shell.headers['cache-control']).toBe('no-cache');
    expect(shell.body.toString()).toContain('<title>Holdfast</title>');
  });
});
