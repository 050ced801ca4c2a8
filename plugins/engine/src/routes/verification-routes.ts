import { defineRoute, type AuditWriter, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { Engine } from '../queue/engine.js';
import type { ExecutionStore } from '../store/execution-store.js';
import { restoreTimeOf, restoreTimes } from '../test-restore/restore-times.js';
import { integrityRequestSchema, verificationBodySchema } from '../verify/integrity-request.js';
import { triggerOf } from './job-run-routes.js';

const errorBody = z.object({ error: z.string() });
const idParams = z.object({ id: z.string().min(1).max(64) });
const queued = z.object({ success: z.literal(true), executionId: z.string(), message: z.string() });

const restoreTimeSchema = z.object({
  jobId: z.string(),
  measuredRestoreMs: z.int().nullable().describe('Duration of the newest passing test restore (restore plus checks), ms; the measured RTO'),
  measuredAt: z.string().nullable(),
  measuredExecutionId: z.string().nullable(),
  last: z
    .object({ executionId: z.string(), status: z.string(), endedAt: z.string().nullable(), error: z.string().nullable(), file: z.string().nullable() })
    .nullable()
    .describe('The newest test restore, passing or not'),
  recoveryPoint: z
    .object({ target: z.string(), recoveredTo: z.string().nullable(), differenceSeconds: z.number().nullable(), restoreSeconds: z.number().nullable() })
    .optional()
    .describe('Point-in-time jobs only: the random instant the newest passing test restore restored to, the last commit the copy held, the seconds between them and the restore time (docs/pitr.md, "Test restores")'),
});

/** Ports of the verification routes. */
export interface VerificationRoutePorts {
  engine: Engine;
  store: ExecutionStore;
  catalog: () => JobCatalog;
  audit: () => AuditWriter | undefined;
}

/**
 * `POST /api/storage/:id/verify` (one backup), `POST /api/integrity-checks` (a job, a destination or everything),
 * `POST /api/jobs/:id/test-restore`, `GET /api/jobs/:id/restore-time` and `GET /api/dashboard/restore-times`.
 */
export function verificationRoutes(ports: VerificationRoutePorts): RouteDefinition[] {
  const audit = (entry: Parameters<AuditWriter['write']>[0]) => ports.audit()?.write(entry).catch(() => undefined);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/storage/:id/verify',
      summary: 'Verify one stored backup: queues a Verification execution (SHA-256 against the sidecar, every encrypted chunk authenticated)',
      tags: ['storage'],
      access: { permission: 'storage:read', scope: { resource: 'destination', param: 'id' } },
      request: { params: idParams, body: verificationBodySchema },
      responses: {
        200: { description: 'Queued.', schema: queued },
        404: { description: 'Storage not found.', schema: errorBody },
      },
      handler: async ({ params, body, auth, ip, userAgent }) => {
        const execution = await ports.engine.enqueueVerification({ ...body, storageId: params.id }, triggerOf(auth));
        await audit({ userId: auth?.userId ?? null, action: 'verify', resource: 'storage', resourceId: params.id, details: { file: body.file, executionId: execution.id }, ipAddress: ip, userAgent: userAgent ?? null });
        return { success: true as const, executionId: execution.id, message: 'Verification queued' };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/integrity-checks',
      summary: 'Start an integrity check of one job, one destination or every backup, optionally within a byte budget',
      tags: ['storage'],
      access: { permission: 'storage:read' },
      request: { body: integrityRequestSchema },
      responses: {
        200: { description: 'Queued.', schema: queued },
        404: { description: 'Job or storage not found.', schema: errorBody },
      },
      handler: async ({ body, auth, ip, userAgent }) => {
        const execution = await ports.engine.enqueueIntegrityCheck(body, triggerOf(auth));
        await audit({ userId: auth?.userId ?? null, action: 'integrity-check', resource: 'storage', resourceId: body.storageId ?? null, details: { jobId: body.jobId ?? null, byteBudget: body.byteBudget ?? null, executionId: execution.id }, ipAddress: ip, userAgent: userAgent ?? null });
        return { success: true as const, executionId: execution.id, message: 'Integrity check queued' };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/jobs/:id/test-restore',
      summary: "Test-restore the job's newest backup into its scratch target, check it, drop the scratch and record the restore time",
      tags: ['executions'],
      access: { permission: 'jobs:execute', scope: { resource: 'job', param: 'id' } },
      request: { params: idParams, body: z.strictObject({}).optional() },
      responses: {
        200: { description: 'Queued.', schema: queued },
        400: { description: 'The job has no test restore target.', schema: errorBody },
        404: { description: 'Job not found.', schema: errorBody },
        422: { description: 'The job is a MySQL/MariaDB point-in-time job whose test restore target is not a database (its test restore rebuilds each database of the base in a throwaway database on a server).', schema: errorBody },
      },
      handler: async ({ params, auth, ip, userAgent }) => {
        const execution = await ports.engine.enqueueTestRestore(params.id, triggerOf(auth));
        await audit({ userId: auth?.userId ?? null, action: 'test-restore', resource: 'job', resourceId: params.id, details: { executionId: execution.id }, ipAddress: ip, userAgent: userAgent ?? null });
        return { success: true as const, executionId: execution.id, message: 'Test restore queued' };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/jobs/:id/restore-time',
      summary: "The job's measured restore time (RTO) from its newest passing test restore, and the newest test restore's outcome",
      tags: ['jobs'],
      access: { permission: 'jobs:read', scope: { resource: 'job', param: 'id' } },
      request: { params: idParams },
      responses: {
        200: { description: 'Restore time.', schema: z.object({ success: z.literal(true), data: restoreTimeSchema }) },
        404: { description: 'Job not found.', schema: errorBody },
      },
      handler: async ({ params }) => {
        await ports.catalog().resolveRunPlan(params.id);
        return { success: true as const, data: await restoreTimeOf(ports.store, params.id) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/restore-times',
      summary: 'Measured restore time (RTO) of every job that had a test restore',
      tags: ['dashboard'],
      access: { permission: 'dashboard:read' },
      responses: {
        200: { description: 'Per job.', schema: z.object({ success: z.literal(true), data: z.array(restoreTimeSchema.extend({ jobName: z.string().nullable() })) }) },
      },
      handler: async () => {
        const times = await restoreTimes(ports.store);
        const names = await ports.catalog().jobNames(times.map((time) => time.jobId));
        // Jobs deleted since are left out: a restore time without its job helps nobody.
        return { success: true as const, data: times.filter((time) => names.has(time.jobId)).map((time) => ({ ...time, jobName: names.get(time.jobId) ?? null })) };
      },
    }),
  ];
}
