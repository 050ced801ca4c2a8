import type { KernelLogger, SettingsReader } from '@holdfast/kernel';
import type { NotificationLogStore } from '../log/notification-log.js';

/** Default of `notification.logRetentionDays`. */
export const DEFAULT_LOG_RETENTION_DAYS = 30;
/** How often old log entries are removed. */
export const DEFAULT_PRUNE_INTERVAL_MS = 6 * 60 * 60_000;

/** Removes log entries older than `notification.logRetentionDays` at start and then periodically (unref'd). */
export class NotificationLogPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly store: NotificationLogStore,
    private readonly settings: () => SettingsReader | undefined,
    private readonly logger: KernelLogger,
    private readonly intervalMs: number = DEFAULT_PRUNE_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    void this.pruneNow();
    this.timer = setInterval(() => void this.pruneNow(), this.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass; answers how many entries were removed (0 on failure, which is logged). */
  pruneNow(): Promise<number> {
    this.running = (async () => {
      try {
        const configured = await this.settings()?.get<number>('notification.logRetentionDays');
        const days = typeof configured === 'number' && configured > 0 ? configured : DEFAULT_LOG_RETENTION_DAYS;
        return await this.store.prune(days);
      } catch (error) {
        this.logger.warn({ err: error }, 'notification log pruning failed');
        return 0;
      }
    })();
    return this.running;
  }
}
