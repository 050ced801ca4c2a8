import type { KernelLogger } from '@holdfast/kernel';

/** One named cleanup that resolves how many rows it removed. */
export interface HousekeepingJob {
  name: string;
  run(): Promise<number>;
}

/**
 * Runs cleanups (audit retention, expired sessions, expired rate-limit counters) once at start and then on an
 * interval (hourly by default). A failing job is logged and does not stop the others.
 */
export class HousekeepingTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly jobs: readonly HousekeepingJob[],
    private readonly logger: KernelLogger,
    private readonly intervalMs = 60 * 60 * 1000,
  ) {}

  start(): void {
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the schedule and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Runs every job once, after a run already going has finished; resolves removed rows by job name. */
  async runOnce(): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    while (this.running) await this.running;
    this.running = (async () => {
      for (const job of this.jobs) {
        try {
          removed[job.name] = await job.run();
          if (removed[job.name]! > 0) this.logger.info({ job: job.name, removed: removed[job.name] }, 'housekeeping removed rows');
        } catch (error) {
          this.logger.error({ err: error, job: job.name }, 'housekeeping job failed');
        }
      }
    })().finally(() => {
      this.running = undefined;
    });
    await this.running;
    return removed;
  }
}
