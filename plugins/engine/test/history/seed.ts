// Seeds executions straight into the table with a seeded pseudo-random mix, and returns them so every
// expectation is computed from the seed by plain filtering and sorting, never written down by hand.
import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/knex';
import type { HoldfastDatabase } from '@holdfast/database';

export interface SeededExecution {
  id: string;
  jobId: string | null;
  type: 'Backup' | 'Restore' | 'IntegrityCheck' | 'Verification';
  status: 'Pending' | 'Running' | 'Success' | 'Partial' | 'Failed' | 'Cancelled';
  startedAt: Date;
  endedAt: Date | null;
  path: string | null;
  triggerType: 'Manual' | 'Scheduler' | 'Api';
  triggerLabel: string;
  metadata: string;
}

/** Deterministic generator (mulberry32), so a failing case reproduces. */
export function randomOf(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, values: readonly T[]): T => values[Math.floor(random() * values.length)]!;

/** `count` executions of `jobIds` (plus job-less restores) spread over the `spanMs` before `now`. */
export function makeExecutions(count: number, jobIds: string[], options: { seed?: number; now?: number; spanMs?: number } = {}): SeededExecution[] {
  const random = randomOf(options.seed ?? 42);
  const now = options.now ?? Date.now();
  const span = options.spanMs ?? 40 * 24 * 3600_000;
  const rows: SeededExecution[] = [];
  for (let index = 0; index < count; index += 1) {
    const type = random() < 0.8 ? 'Backup' : pick(random, ['Restore', 'IntegrityCheck', 'Verification'] as const);
    const jobId = type === 'Restore' && random() < 0.7 ? null : pick(random, jobIds);
    const status = pick(random, ['Success', 'Success', 'Success', 'Partial', 'Failed', 'Cancelled', 'Pending', 'Running'] as const);
    // Whole seconds apart and distinct, so the newest-first order is unambiguous on both databases.
    const startedAt = new Date(Math.floor((now - Math.floor(random() * span)) / 1000) * 1000 - index);
    const isFinal = status !== 'Pending' && status !== 'Running';
    const triggerType = pick(random, ['Manual', 'Scheduler', 'Api'] as const);
    const triggerLabel = triggerType === 'Scheduler' ? 'Scheduler' : pick(random, ['alice', 'Bob', 'ci-key', 'nightly_%key']);
    rows.push({
      id: randomUUID(),
      jobId,
      type,
      status,
      startedAt,
      endedAt: isFinal ? new Date(startedAt.getTime() + 1000 + Math.floor(random() * 60_000)) : null,
      path: status === 'Success' || status === 'Partial' ? `backups/${pick(random, ['Orders', 'crm', 'wiki'])}/dump-${index}.sql.gz` : null,
      triggerType,
      triggerLabel,
      metadata: JSON.stringify({ stage: isFinal ? '05-retention' : '02-dump', progress: isFinal ? 100 : 40 }),
    });
  }
  return rows;
}

/** Inserts rows (and one log line each, which history must never return) in batches. */
export async function insertExecutions(db: HoldfastDatabase, rows: SeededExecution[]): Promise<void> {
  const knex: Knex = db.em().getKnex();
  const platform = db.em().getPlatform();
  const date = (value: Date | null) => (value === null ? null : (platform.processDateProperty(value) as Knex.Value));
  for (let offset = 0; offset < rows.length; offset += 200) {
    const batch = rows.slice(offset, offset + 200);
    await knex('executions').insert(
      batch.map((row, index) => ({
        id: row.id,
        job_id: row.jobId,
        type: row.type,
        status: row.status,
        started_at: date(row.startedAt),
        ended_at: date(row.endedAt),
        size: row.path ? 1000 + index : null,
        path: row.path,
        metadata: row.metadata,
        trigger_type: row.triggerType,
        trigger_label: row.triggerLabel,
        created_at: date(row.startedAt),
        queue_order: row.startedAt.getTime() * 1000 + index,
        lock_backup: false,
        cancel_requested: false,
        error: row.status === 'Failed' ? 'the run failed' : null,
      })),
    );
    await knex('execution_logs').insert(
      batch.map((row) => ({ execution_id: row.id, seq: 0, time: date(row.startedAt), level: 'info', stage: '01-initialize', message: 'secret-free log line' })),
    );
  }
}

/** Newest first, as the history orders. */
export function newestFirst(rows: SeededExecution[]): SeededExecution[] {
  return [...rows].sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime() || (a.id < b.id ? 1 : -1));
}
