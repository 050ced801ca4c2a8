import { z } from 'zod';
import { EXECUTION_STATUSES, EXECUTION_TYPES, TRIGGER_TYPES } from '../store/entities.js';

/** Rows returned when the request names no page (SPEC "Limits": the newest 100). */
export const UNPAGED_LIMIT = 100;
/** Page size when `page` is given without `pageSize`. */
export const DEFAULT_PAGE_SIZE = 50;
/** Largest accepted `pageSize`. */
export const MAX_PAGE_SIZE = 500;
/** Most job ids a name search expands to (more matching jobs than this narrows to the first ones by id). */
export const MAX_NAME_MATCHES = 1000;

/** A comma-separated list of enum values: `status=Failed,Partial`. */
function csvOf<T extends readonly [string, ...string[]]>(values: T, field: string) {
  return z
    .string()
    .max(200)
    .transform((text, ctx) => {
      const items = [...new Set(text.split(',').map((item) => item.trim()).filter(Boolean))];
      const unknown = items.filter((item) => !(values as readonly string[]).includes(item));
      if (unknown.length > 0) {
        ctx.addIssue({ code: 'custom', message: `unknown ${field} ${unknown.map((u) => `'${u}'`).join(', ')}; expected one or more of ${values.join(', ')}` });
        return z.NEVER;
      }
      return items as Array<T[number]>;
    })
    .optional()
    .describe(`One or more of ${values.join(', ')}, comma-separated`);
}

const positiveInt = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a positive whole number')
    .transform(Number)
    .pipe(z.int().min(1).max(max));

/**
 * `scope`: `all` (default) every execution; `job:<id>` the runs of one job; `system` executions without a job
 * (manual restores).
 */
const scopeSchema = z
  .string()
  .max(80)
  .regex(/^(all|system|job:[A-Za-z0-9_-]{1,64})$/, "must be 'all', 'system' or 'job:<job id>'")
  .optional()
  .describe("'all' (default), 'system' (executions without a job) or 'job:<job id>'");

/** Query string of `GET /api/history`. */
export const historyQuerySchema = z.object({
  page: positiveInt(1_000_000).optional().describe('1-based page number; paging returns total, page and pageSize'),
  pageSize: positiveInt(MAX_PAGE_SIZE).optional().describe(`Rows per page, default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE}`),
  scope: scopeSchema,
  type: csvOf(EXECUTION_TYPES, 'type'),
  status: csvOf(EXECUTION_STATUSES, 'status'),
  trigger: csvOf(TRIGGER_TYPES, 'trigger'),
  search: z.string().trim().max(200).optional().describe('Case-insensitive text in the job name, backup path or trigger label'),
  facets: z.enum(['true', 'false']).optional().transform((value) => value === 'true').describe('true: counts per status, type and trigger'),
});

/** A parsed history query. */
export type HistoryQuery = z.output<typeof historyQuerySchema>;

/** What the store filters on, after scope and grants are resolved. */
export interface HistoryFilter {
  /** `null`: any job; otherwise only these job ids (empty: nothing with a job). */
  jobIds: string[] | null;
  /** Only executions without a job (scope `system`). */
  isWithoutJob: boolean;
  types: string[];
  statuses: string[];
  triggers: string[];
  /** Lower-cased search text and the job ids whose name matched it. */
  search: { text: string; jobIds: string[] } | null;
}

/** Offset and limit of a query; `isPaged` when the caller named a page or a page size. */
export function pagingOf(query: HistoryQuery): { isPaged: boolean; page: number; pageSize: number; offset: number } {
  const isPaged = query.page !== undefined || query.pageSize !== undefined;
  if (!isPaged) return { isPaged, page: 1, pageSize: UNPAGED_LIMIT, offset: 0 };
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  return { isPaged, page, pageSize, offset: (page - 1) * pageSize };
}
