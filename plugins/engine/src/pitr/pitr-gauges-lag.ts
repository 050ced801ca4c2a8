import type { ChangeLogKind, EventBus, KernelLogger, SettingsReader } from '@holdfast/kernel';
import type { ChangeLogStore } from './change-log-store.js';
import { emitPitrEvent } from './pitr-events.js';

/** Setting: slot lag (bytes) above which `pitr_lag` is raised; 1 GiB unless set. */
export const LAG_ALERT_SETTING = 'pitr.lagAlertBytes';
export const DEFAULT_LAG_ALERT_BYTES = 1024 ** 3;

/** The alert threshold from the settings, or the default when the setting is unknown, unset or not a positive number. */
export async function lagAlertBytes(settings: SettingsReader | undefined): Promise<number> {
  const value = await settings?.get<unknown>(LAG_ALERT_SETTING).catch(() => undefined);
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : DEFAULT_LAG_ALERT_BYTES;
}

/**
 * Handles the stream's `{ type: 'lag' }` notices of one archiver: stores the figure in `change_log_streams` (the
 * `/metrics` gauge may be served by another process) and raises `pitr_lag` once when it passes the threshold. It is
 * raised again only after the lag fell below 80 % of the threshold, so a lag that hovers around it does not flood.
 */
export class LagWatch {
  private isAlerted = false;
  private threshold: Promise<number> | undefined;

  constructor(
    private readonly deps: { store: ChangeLogStore; events: EventBus | undefined; settings: SettingsReader | undefined; logger: KernelLogger },
    private readonly job: { jobId: string; jobName: string },
    private readonly logKind: ChangeLogKind = 'postgres-wal',
  ) {}

  private queue: Promise<void> = Promise.resolve();

  /**
   * Never throws (a notice listener must not break the stream); resolves when stored and checked. Readings are
   * handled one after the other, so the stored figure is the newest and the alert sees them in order.
   */
  report(bytes: number, now = new Date()): Promise<void> {
    this.queue = this.queue.then(() => this.handle(bytes, now));
    return this.queue;
  }

  private async handle(bytes: number, now: Date): Promise<void> {
    try {
      await this.deps.store.saveLag(this.job.jobId, bytes, now);
      // Read once per archiver run: the setting rarely changes, a stream restart picks a new value up.
      const threshold = await (this.threshold ??= lagAlertBytes(this.deps.settings));
      if (!this.isAlerted && bytes > threshold) {
        this.isAlerted = true;
        const message = lagMessage(this.logKind, this.job.jobName, bytes, threshold);
        this.deps.logger.warn(message);
        emitPitrEvent(this.deps.events, this.deps.logger, 'pitr_lag', { ...this.job, message, bytes, thresholdBytes: threshold });
      } else if (this.isAlerted && bytes < threshold * 0.8) {
        this.isAlerted = false;
      }
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'change-log stream lag not recorded');
    }
  }
}

/** The alert's sentence: PostgreSQL holds the WAL in a replication slot; a MySQL/MariaDB server keeps binary log files. */
function lagMessage(kind: ChangeLogKind, jobName: string, bytes: number, threshold: number): string {
  if (kind === 'mysql-binlog') {
    return `The binary log stream of job "${jobName}" is ${bytes} bytes behind the database server's binary log (alert threshold ${threshold} bytes): the stream falls behind or stopped reading, and the server may purge files Holdfast has not archived yet (binlog_expire_logs_seconds)`;
  }
  return `The replication slot of job "${jobName}" holds ${bytes} bytes of WAL on the database server that Holdfast has not yet archived (alert threshold ${threshold} bytes): the stream falls behind or stopped reading`;
}
