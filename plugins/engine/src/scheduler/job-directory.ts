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

/** How old the job list behind the dashboard and the history search may be, once it is large. */
export const JOB_LIST_MAX_AGE_MS = 5_000;
/** Below this many jobs the list is read fresh on every request (cheap, and exact right after a change). */
export const JOB_LIST_CACHE_FROM = 1_000;

/**
 * A {@link JobDirectory} whose job list, once it holds {@link JOB_LIST_CACHE_FROM} jobs or more, is reused for
 * {@link JOB_LIST_MAX_AGE_MS}: the dashboard's job counts and the history's name search read every job, which costs
 * hundreds of milliseconds at 10,000 jobs. Concurrent readers share one load. The scheduler keeps the uncached
 * directory: it must see job changes on its own reload.
 */
export class CachedJobDirectory implements JobDirectory {
  private cached: { at: number; jobs: Promise<ScheduledJob[]>; isSettled: boolean } | undefined;
  private lastCount = 0;

  constructor(
    private readonly inner: JobDirectory,
    private readonly maxAgeMs = JOB_LIST_MAX_AGE_MS,
    private readonly cacheFrom = JOB_LIST_CACHE_FROM,
    private readonly now: () => number = Date.now,
  ) {}

  scheduledJobs(): Promise<ScheduledJob[]> {
    const isLarge = this.lastCount >= this.cacheFrom;
    if (this.cached && (isLarge || !this.cached.isSettled) && this.now() - this.cached.at < this.maxAgeMs) return this.cached.jobs;
    const jobs = this.inner.scheduledJobs();
    const entry = { at: this.now(), jobs, isSettled: false };
    this.cached = entry;
    jobs.then(
      (list) => {
        entry.isSettled = true;
        this.lastCount = list.length;
      },
      // A failed load is not kept: the next reader tries again.
      () => {
        if (this.cached === entry) this.cached = undefined;
      },
    );
    return jobs;
  }

  async jobIdsNamed(text: string, limit: number): Promise<string[]> {
    const wanted = text.toLowerCase();
    return (await this.scheduledJobs())
      .filter((job) => job.name.toLowerCase().includes(wanted))
      .slice(0, limit)
      .map((job) => job.jobId);
  }

  storageDestinations(): Promise<Array<{ configId: string; name: string; adapterId: string }>> {
    return this.inner.storageDestinations();
  }
}
