import type { KernelLogger } from '@holdfast/kernel';
import type { LogLevel } from './entities.js';
import type { ExecutionStore, PendingLogEntry } from './execution-store.js';

/** Entries are written in batches: at most this many wait... */
export const LOG_BATCH_SIZE = 50;
/** ...or for at most this long. */
export const LOG_FLUSH_MS = 500;

/**
 * The log of one execution: entries are buffered and flushed in batches (every {@link LOG_FLUSH_MS} or
 * {@link LOG_BATCH_SIZE} entries) so a chatty run costs few writes. Remembers the last error-level message, which
 * becomes the execution's `error`. A failed flush is reported to the process log and retried with the next batch.
 */
export class RunLog {
  private buffer: PendingLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private seq: number;
  lastError: string | null = null;
  stage = '01-initialize';

  constructor(
    private readonly store: ExecutionStore,
    readonly executionId: string,
    private readonly logger: KernelLogger,
    firstSeq = 0,
  ) {
    this.seq = firstSeq;
  }

  debug(message: string): void {
    this.write('debug', message);
  }
  info(message: string): void {
    this.write('info', message);
  }
  warn(message: string): void {
    this.write('warn', message);
  }
  error(message: string): void {
    this.write('error', message);
  }

  write(level: LogLevel, message: string, stage = this.stage): void {
    if (level === 'error') this.lastError = message;
    this.buffer.push({ executionId: this.executionId, seq: this.seq++, time: new Date().toISOString(), level, stage, message });
    this.logger[level]({ executionId: this.executionId, stage }, message);
    if (this.buffer.length >= LOG_BATCH_SIZE) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), LOG_FLUSH_MS);
  }

  /** Writes everything buffered so far; resolves when it is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.store.appendLogs(batch);
      } catch (error) {
        this.logger.error({ err: error, executionId: this.executionId }, 'could not store execution log entries; retrying');
        this.buffer.unshift(...batch);
        this.timer ??= setTimeout(() => void this.flush(), LOG_FLUSH_MS);
      }
    });
    return this.flushing;
  }
}
