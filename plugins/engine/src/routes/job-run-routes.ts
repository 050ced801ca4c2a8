import { defineRoute, type AuditWriter, type AuthContext, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { Engine, RunTrigger } from '../queue/engine.js';
import type { AdapterFactory } from '../run/adapters.js';
import { disposeAll } from '../run/adapters.js';
import { lockedUntilOf, objectLockOf } from '../run/object-lock.js';
import { planRetention } from '../run/retention.js';
import { previewWithObjectLock, type PreviewVerdict } from '../run/retention-preview.js';
import { settingOr } from '../run/services.js';
import { schedulePreviewRoute } from './schedule-preview-route.js';
import type { SettingsReader } from '@holdfast/kernel';

const errorBody = z.object({ error: z.string() });
const jobParams = z.object({ id: z.string().min(1).max(64) });

/** Trigger of a request: an API key makes it `Api` (label: key name), a session `Manual` (label: user name). */
export function triggerOf(auth: AuthContext | null): RunTrigger {
  if (auth?.authMethod === 'apikey') return { type: 'Api', label: auth.actorName ?? null };
  return { type: 'Manual', label: auth?.actorName ?? null };
}

/** Ports the job routes use, resolved lazily (other plugins register them). */
export interface JobRoutePorts {
  engine: Engine;
  catalog: () => JobCatalog;
  settings: () => SettingsReader;
  audit: () => AuditWriter | undefined;
  adapters: () => AdapterFactory;
}

/** `POST /api/jobs/:id/run`, `GET /api/jobs/:id/retention-preview` and the job editor's `GET /api/schedule-preview`. */
export function jobRoutes(ports: JobRoutePorts): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/jobs/:id/run',
      summary: 'Trigger a job: queues a backup execution and returns its id',
      tags: ['executions'],
      access: { permission: 'jobs:execute', scope: { resource: 'job', param: 'id' } },
      request: {
        params: jobParams,
        body: z.strictObject({ lock: z.boolean().optional().describe('Write the backup with locked: true (excluded from retention)') }).optional(),
      },
      responses: {
        200: { description: 'Queued.', schema: z.object({ success: z.literal(true), executionId: z.string(), message: z.string() }) },
        404: { description: 'Job not found.', schema: errorBody },
      },
      handler: async ({ params, body, auth, ip, userAgent }) => {
        const trigger = triggerOf(auth);
        const execution = await ports.engine.enqueueRun(params.id, trigger, { lock: body?.lock === true });
        await ports.audit()?.write({
          userId: auth?.userId ?? null,
          action: 'execute',
          resource: 'job',
          resourceId: params.id,
          details: { trigger: trigger.type === 'Api' ? 'api' : 'manual', apiKeyId: auth?.apiKeyId ?? null, executionId: execution.id },
          ipAddress: ip,
          userAgent: userAgent ?? null,
        }).catch(() => undefined);
        return { success: true as const, executionId: execution.id, message: 'Job queued; it starts when a slot is free' };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/jobs/:id/retention-preview',
      summary: 'What retention would keep and delete on each destination of a job, with reasons (an object-locked destination keeps what it still locks)',
      tags: ['jobs'],
      access: { permission: 'jobs:read', scope: { resource: 'job', param: 'id' } },
      request: { params: jobParams },
      responses: {
        200: {
          description: 'Per destination, the verdict on every backup of the job.',
          schema: z.object({
            success: z.literal(true),
            data: z.array(
              z.object({
                configId: z.string(),
                name: z.string(),
                policyId: z.string().nullable(),
                error: z.string().nullable(),
                backups: z.array(
                  z.object({
                    key: z.string(),
                    createdAt: z.string(),
                    locked: z.boolean(),
                    action: z.enum(['keep', 'prune']),
                    reason: z.string(),
                    retainUntil: z
                      .string()
                      .nullable()
                      .describe("Destinations with objectLockMode: the backup's retain-until date, computed as the engine sets it (a backup the policy would prune before it is kept). Null otherwise"),
                  }),
                ),
              }),
            ),
          }),
        },
        404: { description: 'Job not found.', schema: errorBody },
      },
      handler: async ({ params, signal }) => {
        const plan = await ports.catalog().resolveRunPlan(params.id);
        const timezone = await settingOr(ports.settings(), 'systemTimezone', 'UTC');
        const data = [];
        const now = new Date();
        for (const destination of plan.destinations) {
          const storage = ports.adapters().storage(destination);
          const entry = { configId: destination.configId, name: destination.name, policyId: destination.retention?.policyId ?? null, error: null as string | null, backups: [] as PreviewVerdict[] };
          try {
            if (destination.retention) {
              const strategy = ports.adapters().retention(destination.retention.strategyId, destination.retention.config);
              const verdicts = await planRetention(storage, strategy, { jobId: plan.job.id, timezone, now, signal });
              const lock = objectLockOf(ports.adapters(), destination);
              entry.backups = previewWithObjectLock(verdicts, lock && ((createdAt) => lockedUntilOf(ports.adapters(), destination, lock, createdAt)), now);
            }
          } catch (error) {
            entry.error = (error as Error).message;
          } finally {
            await disposeAll([storage.adapter]);
          }
          data.push(entry);
        }
        return { success: true as const, data };
      },
    }),
    schedulePreviewRoute(ports.settings),
  ];
}
