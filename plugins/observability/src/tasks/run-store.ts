import type { OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/knex';
import { SystemTaskRunEntity, type SystemTaskRunRow } from '../store/entities.js';

/** A task run as the API answers it. */
export interface TaskRunView {
  id: string;
  task: string;
  trigger: 'Scheduler' | 'Manual';
  status: 'Running' | 'Success' | 'Failed';
  message: string | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

function view(row: SystemTaskRunRow): TaskRunView {
  const startedAt = new Date(row.startedAt);
  const endedAt = row.endedAt ? new Date(row.endedAt) : null;
  return {
    id: row.id,
    task: row.task,
    trigger: row.trigger as TaskRunView['trigger'],
    status: row.status as TaskRunView['status'],
    message: row.message ?? null,
    startedAt: startedAt.toISOString(),
    endedAt: endedAt?.toISOString() ?? null,
    durationMs: endedAt ? endedAt.getTime() - startedAt.getTime() : null,
  };
}

/** `system_task_runs`: one row per run, written at start and completed at the end. */
export class TaskRunStore {
  constructor(private readonly database: () => OrmDatabase) {}

  private em(): EntityManager {
    return this.database().em();
  }

  async begin(task: string, trigger: TaskRunView['trigger']): Promise<TaskRunView> {
    const em = this.em();
    const row = em.create(SystemTaskRunEntity, { id: randomUUID(), task, trigger, status: 'Running', message: null, startedAt: new Date(), endedAt: null });
    await em.flush();
    return view(row);
  }

  async finish(id: string, status: 'Success' | 'Failed', message: string): Promise<TaskRunView | null> {
    const em = this.em();
    const row = await em.findOne(SystemTaskRunEntity, { id });
    if (!row) return null;
    em.assign(row, { status, message: message.slice(0, 4000), endedAt: new Date() });
    await em.flush();
    return view(row);
  }

  async find(id: string): Promise<TaskRunView | null> {
    const row = await this.em().findOne(SystemTaskRunEntity, { id });
    return row ? view(row) : null;
  }

  async page(query: { task?: string; status?: string; page: number; pageSize: number }): Promise<{ runs: TaskRunView[]; total: number }> {
    const where: Record<string, unknown> = {};
    if (query.task) where.task = query.task;
    if (query.status) where.status = query.status;
    const [rows, total] = await this.em().findAndCount(SystemTaskRunEntity, where, {
      orderBy: { startedAt: 'desc', id: 'desc' },
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { runs: rows.map(view), total };
  }

  async prune(olderThan: Date): Promise<number> {
    return this.em().nativeDelete(SystemTaskRunEntity, { startedAt: { $lt: olderThan }, status: { $ne: 'Running' } });
  }
}
