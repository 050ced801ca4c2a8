import type { JobCatalog } from '@holdfast/kernel';

/** A job as the scheduler sees it: the effective schedule is the linked preset's when one is set. */
export interface ScheduledJob {
  jobId: string;
  name: string;
  schedule: string;
  enabled: boolean;
  /** Where the schedule came from. */
  scheduleFrom: 'job' | 'preset';
}

/** What the engine's history, dashboard and scheduler read about jobs and storage destinations (owned by the catalog). */
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

/** {@link JobDirectory} over the catalog's kernel port (`TOKENS.JobCatalog`): no plugin reads another's tables. */
export class CatalogDirectory implements JobDirectory {
  constructor(private readonly catalog: () => JobCatalog) {}

  async scheduledJobs(): Promise<ScheduledJob[]> {
    return (await this.catalog().listJobs()).map((job) => ({
      jobId: job.id,
      name: job.name,
      schedule: job.schedule,
      enabled: job.enabled,
      scheduleFrom: job.scheduleFrom,
    }));
  }

  async jobIdsNamed(text: string, limit: number): Promise<string[]> {
    const wanted = text.toLowerCase();
    return (await this.catalog().listJobs())
      .filter((job) => job.name.toLowerCase().includes(wanted))
      .slice(0, limit)
      .map((job) => job.id);
  }

  storageDestinations(): Promise<Array<{ configId: string; name: string; adapterId: string }>> {
    return this.catalog().listStorageDestinations();
  }
}
