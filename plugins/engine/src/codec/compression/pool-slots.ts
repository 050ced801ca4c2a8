import { availableParallelism } from 'node:os';

/**
 * libuv's thread pool size: 4 unless UV_THREADPOOL_SIZE says otherwise (libuv reads it once, when the pool starts;
 * it caps the value at 1024).
 */
export function threadPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const size = Number(env.UV_THREADPOOL_SIZE);
  return Number.isInteger(size) && size > 0 ? Math.min(size, 1024) : 4;
}

/**
 * Threads to compress with when nothing says otherwise: every core, within the thread pool's size minus one (one pool
 * thread is always left for file reads and writes, which share the pool).
 */
export function compressionThreadsForThisMachine(): number {
  return Math.max(1, Math.min(availableParallelism(), threadPoolSize() - 1));
}

/** Runs tasks in arrival order, at most `limit` at once. */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Starts `task` now, or once a running task has released its slot. The task calls `release` once it is done. */
  run(task: (release: () => void) => void): void {
    const start = (): void => {
      this.running++;
      let released = false;
      task(() => {
        if (released) return;
        released = true;
        this.running--;
        this.waiting.shift()?.();
      });
    };
    if (this.running < this.limit) start();
    else this.waiting.push(start);
  }
}

/**
 * ZSTD frames being compressed on libuv's thread pool, for every stream of the process together: one thread of the pool is
 * always left for file reads and writes, which share it (a backup that filled the whole pool with compression waited
 * for its own reads). Two backups at once share these slots instead of each taking them all.
 */
export const compressionSlots = new ConcurrencyLimit(Math.max(1, threadPoolSize() - 1));
