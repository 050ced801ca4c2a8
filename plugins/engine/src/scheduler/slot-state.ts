import type { OrmDatabase } from '@holdfast/orm-port';

/**
 * How far the scheduler has fired (`scheduler_state`, one row): every slot at or before `fired_through` has been
 * queued or skipped. The process that takes the scheduler over reads it and queues the slots that fell due while no
 * process held the scheduler (see `JobScheduler`); the unique (job, slot) index makes a slot that was queued after all
 * a no-op.
 */
export interface SlotState {
  read(): Promise<number | null>;
  write(firedThrough: number, holder: string): Promise<void>;
}

const ROW = 'jobs';

/** {@link SlotState} in the `scheduler_state` table. */
export class DatabaseSlotState implements SlotState {
  constructor(private readonly database: OrmDatabase) {}

  async read(): Promise<number | null> {
    const row: { fired_through: string | number } | undefined = await this.database.em().getKnex()('scheduler_state').select('fired_through').where({ name: ROW }).first();
    return row ? Number(row.fired_through) : null;
  }

  async write(firedThrough: number, holder: string): Promise<void> {
    await this.database
      .em()
      .getKnex()('scheduler_state')
      .insert({ name: ROW, fired_through: Math.floor(firedThrough), holder })
      .onConflict('name')
      .merge(['fired_through', 'holder']);
  }
}
