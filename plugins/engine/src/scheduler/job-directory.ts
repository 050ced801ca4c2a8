import type { DatabasePort } from '@holdfast/kernel';
import type { EntityManager, Knex } from '@mikro-orm/knex';

/** A job as the scheduler sees it: the effective schedule is the linked preset's when one is set. */
export interface ScheduledJob {
  jobId: string;
  name: string;
  schedule: string;
  enabled: boolean;
  /** Where the schedule came from. */
  scheduleFrom: 'job' | 'preset';
}

/**
 * What the engine's history, dashboard and scheduler read about jobs and storage destinations. The catalog owns
 * these records; the kernel's `JobCatalog` port has no listing yet, so {@link CatalogTables} reads the catalog's
 * tables (read-only, by their documented names) through the shared database. Swap in a port-backed
 * implementation when the kernel grows one.
 */
export interface JobDirectory {
  /** Every job with its effective schedule. */
  scheduledJobs(): Promise<ScheduledJob[]>;
  /** Ids of jobs whose name contains `text` (case-insensitive), at most `limit`. */
  jobIdsNamed(text: string, limit: number): Promise<string[]>;
  /** Ids and names of the configured storage destinations. */
  storageDestinations(): Promise<Array<{ configId: string; name: string; adapterId: string }>>;
}

/** Escapes `%`, `_` and the escape character itself for a `LIKE ... ESCAPE '\'` pattern. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** {@link JobDirectory} over the catalog's `jobs`, `schedule_presets` and `adapter_configs` tables. */
export class CatalogTables implements JobDirectory {
  constructor(private readonly database: DatabasePort) {}

  private knex(): Knex {
    return (this.database.em() as EntityManager).getKnex();
  }

  async scheduledJobs(): Promise<ScheduledJob[]> {
    const rows: Array<{ id: string; name: string; schedule: string; enabled: unknown; preset_schedule: string | null }> = await this.knex()('jobs as j')
      .leftJoin('schedule_presets as p', 'p.id', 'j.schedule_preset_id')
      .select('j.id', 'j.name', 'j.schedule', 'j.enabled', 'p.schedule as preset_schedule')
      .orderBy('j.id');
    return rows.map((row) => ({
      jobId: row.id,
      name: row.name,
      schedule: (row.preset_schedule ?? row.schedule ?? '').trim(),
      enabled: row.enabled === true || row.enabled === 1,
      scheduleFrom: row.preset_schedule ? 'preset' : 'job',
    }));
  }

  async jobIdsNamed(text: string, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.knex()('jobs')
      .select('id')
      .whereRaw(`lower(name) like ? escape '\\'`, [likePattern(text)])
      .limit(limit);
    return rows.map((row) => row.id);
  }

  async storageDestinations(): Promise<Array<{ configId: string; name: string; adapterId: string }>> {
    const rows: Array<{ id: string; name: string; adapter_id: string }> = await this.knex()('adapter_configs')
      .select('id', 'name', 'adapter_id')
      .where({ type: 'storage' })
      .orderBy('id');
    return rows.map((row) => ({ configId: row.id, name: row.name, adapterId: row.adapter_id }));
  }
}
