import Router from '@koa/router';
import type { RouteDefinition } from '@holdfast/kernel';
import Koa from 'koa';
import type pino from 'pino';
import type { DependencyContainer } from 'tsyringe';
import { errorResponder } from './internal/error-middleware.js';
import { apiFallback } from './internal/fallbacks.js';
import { createJsonBodyReader, DEFAULT_BODY_LIMIT_BYTES } from './internal/json-body.js';
import { recordMountedRoutes } from './internal/mounted-routes.js';
import { requestContext } from './internal/request-context.js';
import { securityHeaders } from './internal/security-headers.js';
import { createRoutePipeline } from './internal/route-pipeline.js';

/**
 * Optional koa middleware, registered in the container by the composition root, that answers what no route took
 * outside `/api` (the server registers the web app's static files here).
 */
export const HTTP_FALLTHROUGH_HANDLER = Symbol.for('holdfast.http.fallthroughHandler');

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** Where the Authenticator, AccessPolicy, RateLimiter and other ports are resolved from, per request. */
  container: DependencyContainer;
  /** Every route of every plugin. */
  routes: RouteDefinition[];
  logger: pino.Logger;
  /** Believe `X-Forwarded-For` (set only behind a reverse proxy you run). */
  trustProxy: boolean;
  /** Largest accepted JSON request body in bytes (default 1 MB). */
  bodyLimitBytes?: number;
}

/** Two routes on the same method and path would shadow each other silently; fail at startup instead. */
function assertUniqueRoutes(routes: readonly RouteDefinition[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`Duplicate route ${key}: two plugins declare the same method and path`);
    seen.add(key);
  }
}

/**
 * Builds the koa app that serves the API: request ids and logs, the one error mapper, every route with its rate
 * limit, authentication, permission check and validation, and JSON 404/405 under `/api`. Other paths fall
 * through, so the caller can `app.use()` static file serving after it.
 */
export function createHttpApp(options: HttpAppOptions): Koa {
  const { container, routes, logger, trustProxy } = options;
  assertUniqueRoutes(routes);
  // With a proxy, only the last X-Forwarded-For entry (added by that proxy) is trusted; earlier ones are the
  // client's own claim and would let anyone pick the IP the rate limiter counts against.
  const app = new Koa({ proxy: trustProxy, maxIpsCount: trustProxy ? 1 : 0 });
  app.on('error', (error: unknown) => logger.warn({ err: error }, 'response stream failed'));

  const readJsonBody = createJsonBodyReader(options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
  const router = new Router();
  for (const route of routes) {
    router.register(route.path, [route.method], createRoutePipeline(route, { container, readJsonBody }));
  }
  recordMountedRoutes(routes);

  app.use(securityHeaders());
  app.use(requestContext(logger));
  app.use(errorResponder(logger));
  app.use(router.routes());
  app.use(apiFallback());
  if (container.isRegistered(HTTP_FALLTHROUGH_HANDLER, true)) app.use(container.resolve<Koa.Middleware>(HTTP_FALLTHROUGH_HANDLER));
  return app;
}
