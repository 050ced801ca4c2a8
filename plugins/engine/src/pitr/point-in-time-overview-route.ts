import { defineRoute, type AccessPolicy, type PointInTimeStats, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';

const archiveSchema = z.object({
  jobId: z.string(),
  jobName: z.string(),
  windowStart: z.string().nullable().describe('Earliest instant a restore can reach; null without a window'),
  windowEnd: z.string().nullable().describe('Newest instant a restore can reach (the recovery point); null without a window'),
  recoveryPointSeconds: z.number().int().nullable().describe('Seconds since windowEnd; null without a window'),
  segments: z.number().int().describe('Archived pieces: completed segments and current partials'),
  storedBytes: z.number().int().describe('Bytes of the archived log, one copy'),
  slotLagBytes: z.number().int().nullable().describe('WAL the replication slot holds on the database server, as last reported; null when not reported in the last 5 minutes'),
});

/** Ports of the overview route, resolved lazily. */
export interface PointInTimeOverviewPorts {
  stats: () => PointInTimeStats;
  access: () => AccessPolicy | undefined;
}

/**
 * `GET /api/point-in-time`: every point-in-time job's window, recovery point, archive and slot lag in one answer, for
 * the dashboard (the per-job route has the gaps and the streaming state). A scoped identity sees its granted jobs only.
 */
export function pointInTimeOverviewRoutes(ports: PointInTimeOverviewPorts): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/point-in-time',
      summary: "Every point-in-time job's recoverable window, recovery point, archive size and slot lag",
      tags: ['jobs'],
      access: { permission: 'history:read' },
      responses: { 200: { description: 'One entry per job with an archived change log or a stream, by job id.', schema: z.object({ success: z.literal(true), data: z.array(archiveSchema) }) } },
      handler: async ({ auth }) => {
        const policy = ports.access();
        const visible = auth && policy ? await policy.visibleIds(auth, 'history:read', 'job') : 'all';
        const archives = await ports.stats().archives();
        const shown = visible === 'all' ? archives : archives.filter((archive) => visible.includes(archive.jobId));
        return {
          success: true as const,
          data: shown.map((archive) => ({
            ...archive,
            windowStart: archive.windowStart?.toISOString() ?? null,
            windowEnd: archive.windowEnd?.toISOString() ?? null,
            recoveryPointSeconds: archive.recoveryPointSeconds === null ? null : Math.round(archive.recoveryPointSeconds),
          })),
        };
      },
    }),
  ];
}
