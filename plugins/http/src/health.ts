import { defineRoute, routeResult, TOKENS, withTimeout, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { DependencyContainer } from 'tsyringe';

/** How long the health check waits for the database before calling it unreachable. */
export const HEALTH_DATABASE_TIMEOUT_MS = 5_000;

/** Body of `GET /api/health`. */
export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  database: z.object({
    reachable: z.boolean(),
    dialect: z.enum(['sqlite', 'postgresql']).nullable().describe('null when no database is configured'),
  }),
  uptimeSeconds: z.number().int().nonnegative(),
});

/** The probe a load balancer or container runtime calls; never rate limited so it cannot lock itself out. */
export function healthRoute(container: DependencyContainer): RouteDefinition {
  return defineRoute({
    method: 'GET',
    path: '/api/health',
    summary: 'Service health: version, database reachability and uptime',
    tags: ['system'],
    access: { public: true },
    rateLimit: 'none',
    responses: {
      200: { description: 'The service and its database answer.', schema: healthSchema },
      503: { description: 'The database does not answer; `status` is `degraded`.', schema: healthSchema },
    },
    handler: async () => {
      const version = container.isRegistered(TOKENS.RuntimeConfig, true)
        ? container.resolve(TOKENS.RuntimeConfig).version
        : 'unknown';
      const database = container.isRegistered(TOKENS.Database, true) ? container.resolve(TOKENS.Database) : undefined;
      const reachable = database
        ? await withTimeout(
            Promise.resolve()
              .then(() => database.isReachable())
              .catch(() => false),
            HEALTH_DATABASE_TIMEOUT_MS,
            () => false,
          )
        : false;
      const body: z.infer<typeof healthSchema> = {
        status: reachable ? 'ok' : 'degraded',
        version,
        database: { reachable, dialect: database?.dialect ?? null },
        uptimeSeconds: Math.floor(process.uptime()),
      };
      return routeResult({ status: reachable ? 200 : 503, headers: { 'Cache-Control': 'no-store' }, body });
    },
  });
}
