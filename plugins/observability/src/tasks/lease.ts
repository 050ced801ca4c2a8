import type { OrmDatabase } from '@holdfast/orm-port';
import type { Knex } from '@mikro-orm/knex';

/**
 * A lease row per task in `task_leases`: the one `UPDATE ... WHERE expires_at < now` that takes it is atomic on
 * libsql and PostgreSQL, so across processes exactly one holds a task at a time. A holder renews while it runs; a
 * holder that died loses the lease when it expires. Scheduled runs also claim their cron slot, so two processes
 * whose timers fire a moment apart (or one after the other finished) run that slot once.
 */
export class TaskLease {
  constructor(
    private readonly database: () => OrmDatabase,
    private readonly holder: string,
    private readonly now: () => number = Date.now,
  ) {}

  private knex(): Knex {
    return this.database().em().getKnex();
  }

  /** Takes the lease of `task` for `ttlMs`; with `slot`, only when that slot was not claimed yet. */
  async acquire(task: string, ttlMs: number, slot?: number): Promise<boolean> {
    const knex = this.knex();
    await knex('task_leases').insert({ task, holder: null, expires_at: 0, last_slot: 0 }).onConflict('task').ignore();
    const now = this.now();
    let query = knex('task_leases').where('task', task).andWhere('expires_at', '<', now);
    if (slot !== undefined) query = query.andWhere('last_slot', '<', slot);
    const changed = await query.update({ holder: this.holder, expires_at: now + ttlMs, ...(slot !== undefined ? { last_slot: slot } : {}) });
    return Number(changed) === 1;
  }

  /** Extends a held lease; false when it was lost (expired and taken by another process). */
  async renew(task: string, ttlMs: number): Promise<boolean> {
    const changed = await this.knex()('task_leases').where({ task, holder: this.holder }).update({ expires_at: this.now() + ttlMs });
    return Number(changed) === 1;
  }

  async release(task: string): Promise<void> {
    await this.knex()('task_leases').where({ task, holder: this.holder }).update({ holder: null, expires_at: 0 });
  }
}
