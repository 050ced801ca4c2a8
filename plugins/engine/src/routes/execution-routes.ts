import { defineRoute, NotFoundError, routeResult, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import type { Engine } from '../queue/engine.js';
import { FINAL_STATUSES, type ExecutionStatus } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import { executionViewSchema, toExecutionView } from './representation.js';
import { openExecutionStream } from './execution-stream.js';

const errorBody = z.object({ error: z.string() });
const idParams = z.object({ id: z.string().min(1).max(64) });

/** `GET /api/executions/:id`, its SSE feed, and `POST /api/executions/:id/cancel`. */
export function executionRoutes(store: ExecutionStore, engine: Engine, catalog: () => JobCatalog): RouteDefinition[] {
  const load = async (id: string) => {
    const row = await store.get(id);
    if (!row) throw new NotFoundError('Execution not found');
    return row;
  };
  const nameOf = async (jobId: string | null | undefined) => (jobId ? (await catalog().jobNames([jobId])).get(jobId) : undefined);

  return [
    defineRoute({
      method: 'GET',
      path: '/api/executions/:id',
      summary: 'Poll an execution: status, stage, progress, live duration; logs with includeLogs=true',
      tags: ['executions'],
      access: { permission: 'history:read' },
      request: {
        params: idParams,
        query: z.object({ includeLogs: z.enum(['true', 'false']).optional().transform((v) => v === 'true') }),
      },
      responses: {
        200: { description: 'The execution.', schema: z.object({ success: z.literal(true), data: executionViewSchema }) },
        404: { description: 'No execution has this id.', schema: errorBody },
      },
      handler: async ({ params, query }) => {
        const row = await load(params.id);
        const logs = query.includeLogs ? (await store.readLogs(row.id)).map(({ seq: _seq, ...entry }) => entry) : undefined;
        return { success: true as const, data: toExecutionView(row, await nameOf(row.jobId), logs) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/executions/:id/events',
      summary: 'Server-sent events of an execution: stage, progress, log lines and the final status',
      tags: ['executions'],
      access: { permission: 'history:read' },
      request: { params: idParams },
      responses: {
        200: { description: 'text/event-stream: events `progress`, `log`, `status` (last, then the stream ends).', contentType: 'text/event-stream' },
        404: { description: 'No execution has this id.', schema: errorBody },
      },
      handler: async ({ params, signal }) => {
        const row = await load(params.id);
        return routeResult({ headers: { 'Content-Type': 'text/event-stream; charset=utf-8' }, stream: openExecutionStream(store, row.id, signal) });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/executions/:id/cancel',
      summary: 'Cancel an execution: Pending ends at once, Running is aborted and ends Cancelled',
      tags: ['executions'],
      access: { permission: 'jobs:execute' },
      request: { params: idParams },
      responses: {
        200: { description: 'The status after the request.', schema: z.object({ success: z.literal(true), status: z.string(), message: z.string() }) },
        404: { description: 'No execution has this id.', schema: errorBody },
        409: { description: 'The execution has already ended.', schema: errorBody },
      },
      handler: async ({ params }) => {
        const row = await load(params.id);
        if (FINAL_STATUSES.includes(row.status as ExecutionStatus)) {
          return routeResult({ status: 409, body: { error: `Execution already ended (${row.status})` } });
        }
        const status = await engine.cancel(row.id);
        const message = status === 'Cancelled' ? 'Execution cancelled' : `Cancellation requested (status ${status})`;
        return { success: true as const, status, message };
      },
    }),
  ];
}
