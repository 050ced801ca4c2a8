
import type { OrmDatabase } from '@holdfast/orm-port';
import type { EntityManager, Knex } from '@mikro-orm/knex';
import { dateOf } from '../history/history-store.js';
import { addDays, daysBetween, dayOf, startOfDay } from './zoned-days.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Outcome counts of backups over a window. */
export interface OutcomeCounts {
  success: number;
  partial: number;
  failed: number;
}

/** One day of the calendar heat map. */
export interface CalendarDay extends OutcomeCounts {
  date: string;
  outcome: 'success' | 'partial' | 'failed' | 'none';
}

/** Worst outcome of a day: any failed run makes it `failed`, else any partial `partial`, else `success`. */
export function outcomeOf(counts: OutcomeCounts): CalendarDay['outcome'] {
  if (counts.failed > 0) return 'failed';
  if (counts.partial > 0) return 'partial';
  return counts.success > 0 ? 'success' : 'none';
}

/**
 * Backup figures of the dashboard from `executions`: finished-run counts by `ended_at` (index `type, ended_at`)
 * and the calendar by `started_at` (index `type, started_at`). Restores and checks are not backups and are left
 * out; Cancelled runs count in neither.
 */
export class DashboardFigures {
  constructor(private readonly database: OrmDatabase) {}

  private em(): EntityManager {
    return this.database.em();
  }

  private knex(): Knex {
    return this.em().getKnex();
  }

  private dbDate(date: Date): Knex.Value {
    return this.em().getPlatform().processDateProperty(date) as Knex.Value;
  }

  /** Backups that ended since `since`, by status. */
  async finishedSince(since: Date): Promise<OutcomeCounts> {
    const rows: Array<{ status: string; n: number | string }> = await this.knex()('executions')
      .select('status')
      .count({ n: '*' })
      .where('type', 'Backup')
      .where('ended_at', '>=', this.dbDate(since))
      .whereIn('status', ['Success', 'Partial', 'Failed'])
      .groupBy('status');
    const of = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
    return { success: of('Success'), partial: of('Partial'), failed: of('Failed') };
  }

  /** Success share of finished backups in the last 30 days, percent with one decimal; 0 without any run. */
  async successRate30d(now: Date): Promise<number> {
    const counts = await this.finishedSince(new Date(now.getTime() - 30 * DAY_MS));
    const total = counts.success + counts.partial + counts.failed;
    return total === 0 ? 0 : Math.round((counts.success / total) * 1000) / 10;
  }

  /** Per-day backup outcomes from `from` to `to` (inclusive, `YYYY-MM-DD` in `zone`). */
  async calendar(from: string, to: string, zone: string): Promise<CalendarDay[]> {
    const days = new Map<string, OutcomeCounts>(daysBetween(from, to).map((day) => [day, { success: 0, partial: 0, failed: 0 }]));
    const query = this.knex()('executions')
      .where('type', 'Backup')
      .whereIn('status', ['Success', 'Partial', 'Failed'])
      .where('started_at', '>=', this.dbDate(startOfDay(from, zone)))
      .where('started_at', '<', this.dbDate(startOfDay(addDays(to, 1), zone)));
    const add = (day: string, status: string, n: number) => {
      const counts = days.get(day);
      if (!counts) return;
      if (status === 'Success') counts.success += n;
      else if (status === 'Partial') counts.partial += n;
      else counts.failed += n;
    };
    if (this.database.dialect === 'postgresql') {
      // PostgreSQL knows the zone: it groups by local day and sends one row per day and status.
      const rows: Array<{ day: string; status: string; n: number | string }> = await query
        .select(this.knex().raw(`to_char(started_at AT TIME ZONE ?, 'YYYY-MM-DD') AS day`, [zone]), 'status')
        .count({ n: '*' })
        .groupBy('day', 'status');
      for (const row of rows) add(row.day, row.status, Number(row.n));
    } else {
      // libsql has no zone rules: rows are streamed and only the per-day counters are kept.
      for await (const row of query.select('started_at', 'status').stream() as AsyncIterable<{ started_at: Date | number | string; status: string }>) {
        add(dayOf(dateOf(row.started_at), zone), row.status, 1);
      }
    }
    return [...days].map(([date, counts]) => ({ date, ...counts, outcome: outcomeOf(counts) }));
  }
}
