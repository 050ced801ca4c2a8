import { defineRoute, type AccessPolicy, type AuthContext, type JobCatalog, type RouteDefinition, type SettingsReader } from '@holdfast/kernel';
import { z } from 'zod';
import { EXECUTION_STATUSES, EXECUTION_TYPES } from '../store/entities.js';
import { parseMetadata } from '../store/metadata.js';
import type { JobDirectory } from '../scheduler/job-directory.js';
import { historyQuerySchema, MAX_NAME_MATCHES, pagingOf, type HistoryFilter, type HistoryQuery } from './history-query.js';
import { dateOf, type HistoryRow, type HistoryStore } from './history-store.js';

/** One entry of the history list: the execution fields (SPEC "Execution") without `logs`. */
export const historyEntrySchema = z.object({
  id: z.string(),
  jobId: z.string().nullable(),
  jobName: z.string(),
  type: z.enum(EXECUTION_TYPES),
  status: z.enum(EXECUTION_STATUSES),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  duration: z.int().min(0).describe('Milliseconds; computed live while endedAt is null'),
  size: z.int().nullable(),
  path: z.string().nullable(),
  metadata: z.string().nullable().describe('JSON string: stage, progress, checksums, encryption, destinations'),
  progress: z.int().min(0).max(100),
  stage: z.string(),
  error: z.string().nullable(),
  triggerType: z.string().nullable(),
  triggerLabel: z.string().nullable(),
});

const facetCounts = z.record(z.string(), z.int());

/** Response of `GET /api/history`. */
export const historyResponseSchema = z.object({
  executions: z.array(historyEntrySchema),
  systemTimezone: z.string(),
  total: z.int().optional().describe('Rows in the filtered set; present when paged'),
  page: z.int().optional(),
  pageSize: z.int().optional(),
  facets: z.object({ status: facetCounts, type: facetCounts, trigger: facetCounts }).optional(),
});

/** What the history route needs. */
export interface HistoryDeps {
  store: HistoryStore;
  jobs: () => JobDirectory;
  catalog: () => JobCatalog;
  settings: () => SettingsReader;
  access: () => AccessPolicy | undefined;
}

function toEntry(row: HistoryRow, jobName: string | undefined, now: number): z.output<typeof historyEntrySchema> {
  const metadata = parseMetadata(row.metadata);
  const startedAt = dateOf(row.started_at);
  const endedAt = row.ended_at === null ? null : dateOf(row.ended_at);
  return {
    id: row.id,
    jobId: row.job_id,
    jobName: jobName ?? metadata.label ?? (row.job_id ? 'deleted job' : row.type),
    type: row.type as z.output<typeof historyEntrySchema>['type'],
    status: row.status as z.output<typeof historyEntrySchema>['status'],
    startedAt: startedAt.toISOString(),
    endedAt: endedAt ? endedAt.toISOString() : null,
    duration: Math.max(0, (endedAt?.getTime() ?? now) - startedAt.getTime()),
    size: row.size === null ? null : Number(row.size),
    path: row.path,
    metadata: row.metadata,
    progress: Math.round(Math.min(100, Math.max(0, metadata.progress ?? 0))),
    stage: metadata.stage ?? 'queued',
    error: row.status === 'Success' ? null : row.error,
    triggerType: row.trigger_type,
    triggerLabel: row.trigger_label,
  };
}

/** Resolves scope, scoped grants and the name search into a store filter. */
export async function filterOf(query: HistoryQuery, auth: AuthContext | null, deps: HistoryDeps): Promise<HistoryFilter> {
  const policy = deps.access();
  const visible = auth && policy ? await policy.visibleIds(auth, 'history:read', 'job') : 'all';
  const scope = query.scope ?? 'all';
  let jobIds: string[] | null = visible === 'all' ? null : visible;
  if (scope.startsWith('job:')) {
    const id = scope.slice(4);
    jobIds = jobIds === null || jobIds.includes(id) ? [id] : [];
  }
  // A scoped user sees runs of the granted jobs only; executions without a job belong to nobody's grant.
  const isWithoutJob = scope === 'system';
  if (isWithoutJob && jobIds !== null) jobIds = [];
  const text = query.search?.toLowerCase();
  return {
    jobIds,
    isWithoutJob: isWithoutJob && jobIds === null,
    types: query.type ?? [],
    statuses: query.status ?? [],
    triggers: query.trigger ?? [],
    search: text ? { text, jobIds: await deps.jobs().jobIdsNamed(text, MAX_NAME_MATCHES) } : null,
  };
}

/** `GET /api/history`. */
export function historyRoutes(deps: HistoryDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/history',
      summary: 'Executions newest first, with paging, filters, text search and facet counts; never logs',
      tags: ['history'],
      access: { permission: 'history:read' },
      request: { query: historyQuerySchema },
      responses: {
        200: { description: 'Without page/pageSize: the newest 100 of the filtered set. With them: that page and total.', schema: historyResponseSchema },
        400: { description: 'A query parameter is invalid.', schema: z.object({ error: z.string() }) },
      },
      handler: async ({ query, auth }) => {
        const filter = await filterOf(query, auth, deps);
        const paging = pagingOf(query);
        const [rows, total, facets, systemTimezone] = await Promise.all([
          deps.store.page(filter, paging.offset, paging.pageSize),
          paging.isPaged ? deps.store.count(filter) : undefined,
          query.facets ? deps.store.facets(filter) : undefined,
          deps.settings().get<string>('systemTimezone'),
        ]);
        const jobIds = [...new Set(rows.map((row) => row.job_id).filter((id): id is string => id !== null))];
        const names = jobIds.length > 0 ? await deps.catalog().jobNames(jobIds) : new Map<string, string>();
        const now = Date.now();
        return {
          executions: rows.map((row) => toEntry(row, row.job_id ? names.get(row.job_id) : undefined, now)),
          systemTimezone: systemTimezone || 'UTC',
          ...(paging.isPaged ? { total, page: paging.page, pageSize: paging.pageSize } : {}),
          ...(facets ? { facets } : {}),
        };
      },
    }),
  ];
}
