import { HttpError, NotFoundError } from '@holdfast/kernel';
import type { Middleware } from 'koa';

/** 405 with the `Allow` header the caller needs. */
export class MethodNotAllowedError extends HttpError {
  override readonly name = 'MethodNotAllowedError';
  constructor(readonly allowed: string[]) {
    super(405, `Method not allowed: use ${allowed.join(', ')}`);
  }
}

function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

/**
 * Runs after the router when no route took the request. Under `/api` it answers 404, 405 (path known, method
 * not) or an OPTIONS listing; other paths pass on, so the server can serve the web app after this app's middleware.
 */
export function apiFallback(): Middleware {
  return async (ctx, next) => {
    if (!isApiPath(ctx.path)) {
      await next();
      return;
    }
    const matchedLayers = (ctx as { matched?: Array<{ methods: string[] }> }).matched ?? [];
    const allowed = [...new Set(matchedLayers.flatMap((layer) => layer.methods))];
    if (allowed.length === 0) throw new NotFoundError('Not found');
    ctx.set('Allow', [...allowed, 'OPTIONS'].join(', '));
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new MethodNotAllowedError(allowed);
  };
}
