import { hostname } from 'node:os';
import type { OrmDatabase } from '@holdfast/orm-port';
import type { Knex } from '@mikro-orm/knex';
import type { ProcessRole } from './process-role.js';

/** A live engine process as `engine_processes` records it. */
export interface EngineProcessRow {
  id: string;
  role: ProcessRole;
  host: string;
  pid: number;
  startedAt: number;
  heartbeatAt: number;
}

/**
 * `engine_processes` (PostgreSQL): one row per running engine, refreshed with the run heartbeat. The claim reads how
 * many workers are alive to give each its share of `maxConcurrentJobs`; operators read it to map the
 * `executions.claimed_by` of a run to a host and pid. A row whose heartbeat is older than the stale limit is a
 * process that is gone; the next heartbeat of any process deletes such rows.
 */
export class ProcessRegistry {
  private readonly startedAt = Date.now();

  constructor(
    private readonly database: OrmDatabase,
    private readonly processId: string,
    private readonly role: ProcessRole,
  ) {}

  private knex(): Knex {
    return this.database.em().getKnex();
  }

  /** Records (or refreshes) this process and forgets processes silent for longer than `staleAfterMs`. */
  async beat(staleAfterMs: number): Promise<void> {
    const now = Date.now();
    const row = { id: this.processId, role: this.role, host: hostname().slice(0, 255), pid: process.pid, started_at: this.startedAt, heartbeat_at: now };
    await this.knex()('engine_processes').insert(row).onConflict('id').merge(['heartbeat_at']);
    await this.knex()('engine_processes').where('heartbeat_at', '<', now - staleAfterMs).delete();
  }

  async remove(): Promise<void> {
    await this.knex()('engine_processes').where({ id: this.processId }).delete();
  }

  /** Processes whose heartbeat is fresh. */
  async live(staleAfterMs: number): Promise<EngineProcessRow[]> {
    const rows: Array<{ id: string; role: string; host: string; pid: number; started_at: string | number; heartbeat_at: string | number }> = await this.knex()('engine_processes')
      .select('*')
      .where('heartbeat_at', '>=', Date.now() - staleAfterMs)
      .orderBy('started_at');
    return rows.map((row) => ({ id: row.id, role: row.role as ProcessRole, host: row.host, pid: row.pid, startedAt: Number(row.started_at), heartbeatAt: Number(row.heartbeat_at) }));
  }
}
