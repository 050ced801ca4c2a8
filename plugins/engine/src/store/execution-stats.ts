import type { OrmDatabase } from '@holdfast/orm-port';
import type { ExecutionStats } from '@holdfast/kernel';

/** A datetime column as libsql (epoch ms or text) or PostgreSQL (Date) returns it. */
function dateOf(value: Date | number | string): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  return /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
}

/** The engine's {@link ExecutionStats}: aggregate queries on its `executions` table (indexed by status and job). */
export function executionStatsPort(database: () => OrmDatabase): ExecutionStats {
  const knex = () => database().em().getKnex();
  return {
    async lastSuccessfulBackups() {
      const rows: Array<{ job_id: string; ended: Date | number | string | null }> = await knex()('executions')
        .select('job_id')
        .max({ ended: 'ended_at' })
        .where({ type: 'Backup', status: 'Success' })
        .whereNotNull('job_id')
        .groupBy('job_id');
      return rows.flatMap((row) => (row.ended === null ? [] : [{ jobId: row.job_id, endedAt: dateOf(row.ended) }]));
    },
    async countByStatus(status) {
      const row: { n?: number | string } | undefined = await knex()('executions').count({ n: '*' }).where({ status }).first();
      return Number(row?.n ?? 0);
    },
  };
}
