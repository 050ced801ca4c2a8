import { defineRoute, routeResult, type AccessPolicy, type AuditWriter, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { Engine } from '../queue/engine.js';
import { triggerOf } from '../routes/job-run-routes.js';
import { preflightPointRestore, type PointRestorePorts } from './restore/point-restore-preflight.js';
import { pointRestoreBodySchema } from './restore/point-restore-request.js';
import { targetSourceForbidden } from './restore/point-restore-server.js';

const errorBody = z.object({ error: z.string() });

/**
 * `POST /api/jobs/:id/point-in-time/restore`: queues a restore of the job's data to an instant of its window. A
 * PostgreSQL job's whole cluster is built in a local folder (`targetPath`); a MySQL/MariaDB job's database
 * (`database`) is built in a new database (`targetDatabase`) on the source's own server or, with `targetSourceId`, on
 * the server of another stored source configuration of the same adapter.
 */
export function pointInTimeRestoreRoutes(engine: Engine, ports: PointRestorePorts & { audit: () => AuditWriter | undefined; access?: () => AccessPolicy | undefined }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/jobs/:id/point-in-time/restore',
      summary:
        "Restore a point-in-time job to an instant of its recoverable window: a PostgreSQL cluster into a local folder (targetPath), or one MySQL/MariaDB database into a new database on the source's server or another source's server of the same adapter (database, targetDatabase, targetSourceId)",
      tags: ['jobs'],
      access: { permission: 'storage:restore', scope: { resource: 'job', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }), body: pointRestoreBodySchema },
      responses: {
        202: { description: 'Queued: follow the run with GET /api/executions/{executionId}.', schema: z.object({ success: z.literal(true), data: z.object({ executionId: z.string() }) }) },
        400: {
          description:
            "Bad body (unknown field, time without offset, relative path, a database name MySQL or the replay cannot take), a field of the other kind of job (PostgreSQL: targetPath required, database/targetDatabase refused; MySQL/MariaDB: database and targetDatabase required, targetPath/servePort and named restore points refused; targetSourceId is MySQL/MariaDB only), a log position of the other kind (target.position), a system schema as targetDatabase, a destinationId that is not one of the job, or a targetPath whose parent folder is missing. Nothing is queued.",
          schema: errorBody,
        },
        403: {
          description: 'targetPath (or the WAL folder beside it) is outside the folders allowed for local paths (HOLDFAST_LOCAL_ROOTS), or the caller may not restore onto the source targetSourceId names (storage:restore on that source). Nothing is queued.',
          schema: errorBody,
        },
        404: { description: 'Job not found, or targetSourceId names no stored source configuration.', schema: errorBody },
        409: {
          description:
            "The job is not set up for point-in-time recovery, has no recoverable window, targetPath is not empty, servePort is in use, targetDatabase already exists on the server it would be built on (the job's own or targetSourceId's), or the targetSourceId source is excluded from restores. Nothing is queued.",
          schema: errorBody,
        },
        422: {
          description:
            'The target cannot be reached: a time outside the recoverable window (the message gives the window), a position before the oldest base backup, no base backup on the named destination, a database that the chosen base backup does not hold (the message lists those it holds), a job encrypted with a public-key profile, or a targetSourceId source of another adapter or one that cannot restore to a point (reached over SSH). Nothing is queued.',
          schema: errorBody,
        },
        502: { description: 'The server the new database would be built on could not be asked for its databases (to check that targetDatabase is new). Nothing is queued.', schema: errorBody },
      },
      handler: async ({ params, body, auth, ip, userAgent }) => {
        // Writing onto another server is a restore onto that source too: a grant scoped to sources must cover it.
        // (Today the route's job scope only admits an unscoped storage:restore, which covers every source; this keeps
        // it so should storage:restore ever become scopable to jobs.)
        const policy = ports.access?.();
        if (body.targetSourceId !== undefined && auth && policy && !(await policy.isAllowed(auth, 'storage:restore', { type: 'source', id: body.targetSourceId }))) {
          throw targetSourceForbidden(body.targetSourceId);
        }
        const request = await preflightPointRestore(ports, params.id, body);
        const plan = await ports.catalog().resolveRunPlan(params.id);
        const execution = await engine.enqueuePointRestore(request, plan.job.name, triggerOf(auth));
        const details = {
          pointInTime: true,
          target: body.target,
          targetPath: request.targetPath ?? null,
          servePort: request.servePort ?? null,
          database: request.database ?? null,
          targetSourceId: request.targetSource?.id ?? null,
          destinationId: body.destinationId ?? null,
          executionId: execution.id,
        };
        await ports
          .audit()
          ?.write({ userId: auth?.userId ?? null, action: 'restore', resource: 'job', resourceId: params.id, details, ipAddress: ip, userAgent: userAgent ?? null })
          .catch(() => undefined);
        return routeResult({ status: 202, body: { success: true as const, data: { executionId: execution.id } } });
      },
    }),
  ];
}
