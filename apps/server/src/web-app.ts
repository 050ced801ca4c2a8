import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HTTP_FALLTHROUGH_HANDLER } from '@holdfast/http-server';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';

/**
 * The admin web app's policy: scripts only from this origin (no inline script, no eval); styles also inline because
 * Mantine writes its theme variables and style props inline; API calls and the event stream stay same-origin.
 */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Precompressed siblings the web build writes (`<file>.br`, `<file>.gz`), in order of preference. */
const PRECOMPRESSED = [
  { encoding: 'br', suffix: '.br' },
  { encoding: 'gzip', suffix: '.gz' },
] as const;

/** The encodings a request accepts (q=0 excluded); `Accept-Encoding` is short, so a split is enough. */
function acceptedEncodings(header: string): Set<string> {
  const accepted = new Set<string>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const isRefused = params.some((param) => /^\s*q=0(\.0*)?\s*$/.test(param));
    if (name && !isRefused) accepted.add(name.trim());
  }
  return accepted;
}

/**
 * The file to send for `file`: its brotli or gzip sibling when the client accepts that encoding and the build wrote
 * one (issue 47: the app's 1.5 MB of JavaScript and CSS went out uncompressed), else the file itself.
 */
async function pickEncoding(file: string, acceptEncoding: string): Promise<{ path: string; encoding?: string; size: number; hasVariants: boolean }> {
  const accepted = acceptedEncodings(acceptEncoding);
  let hasVariants = false;
  for (const variant of PRECOMPRESSED) {
    const info = await stat(file + variant.suffix).catch(() => undefined);
    if (!info?.isFile()) continue;
    hasVariants = true;
    if (accepted.has(variant.encoding)) return { path: file + variant.suffix, encoding: variant.encoding, size: info.size, hasVariants };
  }
  return { path: file, size: (await stat(file)).size, hasVariants };
}

/**
 * Where the built web app is: `HOLDFAST_WEB_DIR`, else the `dist` of the `@holdfast/web` workspace package.
 * Undefined when it was not built (the server then serves only the API).
 */
export function findWebRoot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.HOLDFAST_WEB_DIR?.trim();
  if (configured) return existsSync(join(configured, 'index.html')) ? resolve(configured) : undefined;
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('@holdfast/web/package.json')), 'dist'));
  } catch {
    // not installed as a package: fall back to the monorepo layout below
  }
  candidates.push(fileURLToPath(new URL('../../web/dist', import.meta.url)));
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * Serves the built single-page app for every GET/HEAD outside `/api`: a file when one exists, otherwise
 * index.html (client-side routes). Hashed files under `assets/` are immutable; index.html is always revalidated.
 */
export function serveWebApp(root: string): Middleware {
  const base = resolve(root) + sep;
  return async (ctx, next) => {
    const isApi = ctx.path === '/api' || ctx.path.startsWith('/api/');
    if (isApi || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    let relative = '';
    try {
      relative = decodeURIComponent(ctx.path).replace(/^\/+/, '');
    } catch {
      ctx.throw(400, 'Malformed URL encoding in path');
    }
    const candidate = resolve(base, relative);
    // Outside the root (../ tricks) or a missing file: the SPA shell, whose router shows its own "not found".
    let file = join(base, 'index.html');
    if (candidate.startsWith(base)) {
      const info = await stat(candidate).catch(() => undefined);
      if (info?.isFile()) file = candidate;
    }
    const isShell = file === join(base, 'index.html');
    // A missing hashed asset is a stale page asking for an old build: a 404, not the HTML shell under a .js name.
    if (isShell && relative.startsWith('assets/')) ctx.throw(404, 'No such asset: reload the page to get the current build');
    const isHashedAsset = !isShell && file.startsWith(join(base, 'assets') + sep);
    ctx.set('Cache-Control', isHashedAsset ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.set('Content-Security-Policy', WEB_CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
    const chosen = await pickEncoding(file, ctx.get('Accept-Encoding'));
    // Caches must keep the compressed and the plain answer apart.
    if (chosen.hasVariants) ctx.vary('Accept-Encoding');
    if (chosen.encoding) ctx.set('Content-Encoding', chosen.encoding);
    ctx.length = chosen.size;
    if (ctx.method === 'HEAD') ctx.status = 200;
    else ctx.body = createReadStream(chosen.path);
  };
}

/** Serves the built web app at `/` when there is one (after the API routes, so `/api` is never shadowed). */
export function registerWebApp(container: DependencyContainer, env: NodeJS.ProcessEnv, logger: Logger): void {
  const webRoot = findWebRoot(env);
  if (webRoot) container.register(HTTP_FALLTHROUGH_HANDLER, { useValue: serveWebApp(webRoot) });
  logger.info({ webRoot: webRoot ?? null }, webRoot ? 'serving the web app at /' : 'web app not built: serving the API only');
}
