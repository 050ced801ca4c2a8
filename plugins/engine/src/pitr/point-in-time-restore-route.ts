import { defineRoute, routeResult, type AuditWriter, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { Engine } from '../queue/engine.js';
import { triggerOf } from '../routes/job-run-routes.js';
import { preflightPointRestore, type PointRestorePorts } from './restore/point-restore-preflight.js';
import { pointRestoreBodySchema } from './restore/point-restore-request.js';

const errorBody = z.object({ error: z.string() });

/** `POST /api/jobs/:id/point-in-time/restore`: queues a restore of the job's cluster to an instant of its window. */
export function pointInTimeRestoreRoutes(engine: Engine, ports: PointRestorePorts & { audit: () => AuditWriter | undefined }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/jobs/:id/point-in-time/restore',
      summary: "Restore a point-in-time job's database cluster to an instant of its recoverable window, into a local folder",
      tags: ['jobs'],
      access: { permission: 'storage:restore', scope: { resource: 'job', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }), body: pointRestoreBodySchema },
      responses: {
        202: { description: 'Queued: follow the run with GET /api/executions/{executionId}.', schema: z.object({ success: z.literal(true), data: z.object({ executionId: z.string() }) }) },
        400: { description: 'Bad body (unknown field, time without offset, relative path), a destinationId that is not one of the job, or a targetPath whose parent folder is missing. Nothing is queued.', schema: errorBody },
        403: { description: 'targetPath (or the WAL folder beside it) is outside the folders allowed for local paths (HOLDFAST_LOCAL_ROOTS). Nothing is queued.', schema: errorBody },
        404: { description: 'Job not found.', schema: errorBody },
        409: { description: 'The job is not set up for point-in-time recovery, has no recoverable window, targetPath is not empty, or servePort is in use. Nothing is queued.', schema: errorBody },
        422: { description: 'The target cannot be reached: a time outside the recoverable window (the message gives the window), a position before the oldest base backup, no base backup on the named destination, or a job encrypted with a public-key profile. Nothing is queued.', schema: errorBody },
      },
      handler: async ({ params, body, auth, ip, userAgent }) => {
        const request = await preflightPointRestore(ports, params.id, body);
        const plan = await ports.catalog().resolveRunPlan(params.id);
        const execution = await engine.enqueuePointRestore(request, plan.job.name, triggerOf(auth));
        await ports
          .audit()
          ?.write({ userId: auth?.userId ?? null, action: 'restore', resource: 'job', resourceId: params.id, details: { pointInTime: true, target: body.target, targetPath: body.targetPath, servePort: body.servePort ?? null, destinationId: body.destinationId ?? null, executionId: execution.id }, ipAddress: ip, userAgent: userAgent ?? null })
          .catch(() => undefined);
        return routeResult({ status: 202, body: { success: true as const, data: { executionId: execution.id } } });
      },
    }),
  ];
}
