import { defineRoute, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import type { ChangeLogStore, StreamRecord } from './change-log-store.js';
import { recoveryWindow } from './recovery-window.js';

const errorBody = z.object({ error: z.string() });

/** A stream whose row was not refreshed for this long belongs to a process that is gone (the supervisor refreshes it every pass). */
export const STREAM_STALE_MS = 90_000;

const streamingSchema = z.object({
  process: z.object({ id: z.string(), host: z.string(), pid: z.number().int() }).optional().describe('The server process that streams (or last streamed) the job'),
  since: z.string().optional().describe('When that process started streaming'),
  state: z.enum(['streaming', 'retrying', 'stopped', 'failed', 'stale', 'not-started']).describe('retrying: a destination refused a piece and it is being retried; stale: the streaming process stopped reporting'),
  lastError: z.string().optional(),
});

const pointInTimeSchema = z.object({
  enabled: z.boolean().describe("True when the job's source is set up for point-in-time recovery"),
  logKind: z.string().optional(),
  streaming: streamingSchema.optional(),
  window: z
    .object({ start: z.string(), end: z.string(), baseExecutionId: z.string(), timeline: z.number().int() })
    .nullable()
    .optional()
    .describe('Instants a restore can reach; null when no base backup is followed by unbroken archived log'),
  gaps: z.array(z.object({ after: z.string(), next: z.string(), missing: z.number().int() })).optional().describe('Missing segments: nothing between after and next'),
  segments: z.number().int().optional(),
  storedBytes: z.number().int().optional().describe('Bytes of the archived log, one copy'),
  recoveryPointSeconds: z.number().int().nullable().optional().describe('Seconds since the newest instant a restore can reach'),
});

/** Ports of the route, resolved lazily. */
export interface PointInTimeRoutePorts {
  catalog: () => JobCatalog;
  adapters: () => AdapterFactory;
  store: () => ChangeLogStore;
  now?: () => Date;
}

/** `GET /api/jobs/:id/point-in-time`: the job's recoverable window, gaps, archive size and who streams it. */
export function pointInTimeRoutes(ports: PointInTimeRoutePorts): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/jobs/:id/point-in-time',
      summary: "A point-in-time job's recoverable window, gaps in its archived change log, archive size, recovery point and streaming state",
      tags: ['jobs'],
      access: { permission: 'history:read', scope: { resource: 'job', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }) },
      responses: {
        200: { description: 'The window; `{ enabled: false }` for a job whose source is not set up for point-in-time recovery.', schema: z.object({ success: z.literal(true), data: pointInTimeSchema }) },
        404: { description: 'Job not found.', schema: errorBody },
      },
      handler: async ({ params }) => {
        const plan = await ports.catalog().resolveRunPlan(params.id);
        const source = ports.adapters().source(plan.source);
        let logKind: string | undefined;
        try {
          logKind = source.pointInTime?.()?.logKind;
        } finally {
          await disposeAll([source]);
        }
        if (!logKind) return { success: true as const, data: { enabled: false } };
        const store = ports.store();
        const now = ports.now?.() ?? new Date();
        const [bases, pieces, stream] = await Promise.all([store.basesOf(plan.job.id), store.piecesOf(plan.job.id), store.streamOf(plan.job.id)]);
        const computed = recoveryWindow({ kind: logKind as 'postgres-wal' | 'mysql-binlog', bases: bases.filter((base) => base.logKind === logKind), pieces, now });
        return {
          success: true as const,
          data: {
            enabled: true,
            logKind,
            streaming: streamingOf(stream, now),
            window: computed.window ? { start: computed.window.start.toISOString(), end: computed.window.end.toISOString(), baseExecutionId: computed.window.baseExecutionId, timeline: computed.window.timeline } : null,
            gaps: computed.gaps,
            segments: computed.segments,
            storedBytes: computed.storedBytes,
            recoveryPointSeconds: computed.recoveryPointSeconds,
          },
        };
      },
    }),
  ];
}

function streamingOf(stream: StreamRecord | null, now: Date): z.output<typeof streamingSchema> {
  if (!stream) return { state: 'not-started' };
  const isLive = stream.state === 'streaming' || stream.state === 'retrying';
  const state = isLive && now.getTime() - stream.updatedAt.getTime() > STREAM_STALE_MS ? 'stale' : stream.state;
  return {
    process: { id: stream.processId, host: stream.host, pid: stream.pid },
    since: stream.since.toISOString(),
    state,
    ...(stream.lastError ? { lastError: stream.lastError } : {}),
  };
}
