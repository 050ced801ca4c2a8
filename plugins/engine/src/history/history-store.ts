
import type { OrmDatabase } from '@holdfast/orm-port';
import type { Knex } from '@mikro-orm/knex';
import { likePattern } from '../scheduler/job-directory.js';
import type { HistoryFilter } from './history-query.js';

/** Columns a history entry needs: everything but the queue bookkeeping and the request body; never logs. */
export const HISTORY_COLUMNS = [
  'id',
  'job_id',
  'type',
  'status',
  'started_at',
  'ended_at',
  'size',
  'path',
  'metadata',
  'trigger_type',
  'trigger_label',
  'error',
] as const;

/** One row as the history query reads it. */
export interface HistoryRow {
  id: string;
  job_id: string | null;
  type: string;
  status: string;
  started_at: Date | number | string;
  ended_at: Date | number | string | null;
  size: number | string | null;
  path: string | null;
  metadata: string | null;
  trigger_type: string | null;
  trigger_label: string | null;
  error: string | null;
}

/** Counts per value of one column. */
export type FacetCounts = Record<string, number>;

/** Facet counts of a filtered set. */
export interface HistoryFacets {
  status: FacetCounts;
  type: FacetCounts;
  trigger: FacetCounts;
}

/** A stored date as a Date: libsql keeps milliseconds, PostgreSQL answers Date objects. */
export function dateOf(value: Date | number | string): Date {
  return value instanceof Date ? value : new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
}

/**
 * History reads over `executions`. Every filter maps to an indexed column (`status`, `type`, `trigger_type`,
 * `job_id`, each paired with `started_at`), and rows come newest first by `started_at`, so a page is an index
 * range scan. A text search filters along the `started_at` order (substring matches cannot use a b-tree).
 */
export class HistoryStore {
  constructor(private readonly database: OrmDatabase) {}

  private knex(): Knex {
    return this.database.em().getKnex();
  }

  /** The filtered set as a query builder on `executions`. */
  private filtered(filter: HistoryFilter): Knex.QueryBuilder {
    const query = this.knex()('executions');
    if (filter.jobIds) {
      if (filter.jobIds.length === 0) query.whereRaw('1 = 0');
      else query.whereIn('job_id', filter.jobIds);
    }
    if (filter.isWithoutJob) query.whereNull('job_id');
    if (filter.types.length > 0) query.whereIn('type', filter.types);
    if (filter.statuses.length > 0) query.whereIn('status', filter.statuses);
    if (filter.triggers.length > 0) query.whereIn('trigger_type', filter.triggers);
    const search = filter.search;
    if (search) {
      const pattern = likePattern(search.text);
      query.where((inner) => {
        inner.whereRaw(`lower(path) like ? escape '\\'`, [pattern]).orWhereRaw(`lower(trigger_label) like ? escape '\\'`, [pattern]);
        if (search.jobIds.length > 0) inner.orWhereIn('job_id', search.jobIds);
      });
    }
    return query;
  }

  /** One page, newest first. */
  async page(filter: HistoryFilter, offset: number, limit: number): Promise<HistoryRow[]> {
    return this.filtered(filter)
      .select(...HISTORY_COLUMNS)
      .orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .offset(offset)
      .limit(limit);
  }

  /** SQL of a page query, for EXPLAIN in tests and the benchmark. */
  pageSql(filter: HistoryFilter, offset: number, limit: number): { sql: string; bindings: readonly unknown[] } {
    const native = this.filtered(filter)
      .select(...HISTORY_COLUMNS)
      .orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .offset(offset)
      .limit(limit)
      .toSQL()
      .toNative();
    return { sql: native.sql, bindings: native.bindings };
  }

  async count(filter: HistoryFilter): Promise<number> {
    const [row] = await this.filtered(filter).count<Array<{ n: number | string }>>({ n: '*' });
    return Number(row?.n ?? 0);
  }

  async facets(filter: HistoryFilter): Promise<HistoryFacets> {
    const countBy = async (column: string): Promise<FacetCounts> => {
      const rows: Array<{ value: string | null; n: number | string }> = await this.filtered(filter)
        .select({ value: column })
        .count({ n: '*' })
        .groupBy(column);
      return Object.fromEntries(rows.map((row) => [row.value ?? 'none', Number(row.n)]));
    };
    const [status, type, trigger] = await Promise.all([countBy('status'), countBy('type'), countBy('trigger_type')]);
    return { status, type, trigger };
  }
}
