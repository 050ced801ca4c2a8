import type { Middleware } from 'koa';

/**
 * What every answer of the API may do in a browser: nothing. JSON and downloads are never documents to render, so
 * the policy allows no content and no framing (clickjacking); no referrer leaks a path or a download token onward.
 * The web app's own files replace the policy and the referrer rule with the ones its page needs (apps/server).
 */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Sets the browser security headers on every answer, errors included (set before any handler runs). */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Security-Policy', API_CONTENT_SECURITY_POLICY);
    await next();
  };
}
