import { dirname } from 'node:path';

/**
 * Small files of a restore written several at once while the archive is read on. Each write is a handful of round
 * trips to libuv's thread pool (open, write, chmod, utimes, close); one file at a time, a tree of small files restored
 * at a tenth of the speed of `tar -x`. Callers start a write per file and drain before anything whose effect depends
 * on those files (every entry that is not a small file, and the end of the restore).
 */
export class ConcurrentWrites {
  private readonly running = new Map<string, Promise<void>>();
  private failure: { error: unknown } | undefined;

  constructor(private readonly lanes: number) {}

  /**
   * Starts `write` once a lane is free and no write to the same path is running (a later entry for a path wins, as
   * it would one at a time). Throws the first failure of an earlier write instead of starting more.
   */
  async start(path: string, write: () => Promise<void>): Promise<void> {
    this.throwIfFailed();
    await this.running.get(path);
    while (this.running.size >= this.lanes) await Promise.race(this.running.values());
    this.throwIfFailed();
    const task = write()
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.running.delete(path));
    this.running.set(path, task);
  }

  /**
   * Waits for running writes of the folders above `path` (a file entry named like a folder of a later entry): the
   * later entry then meets the file, not a folder its mkdir made first, which the file's write would remove again.
   */
  async waitForParents(path: string): Promise<void> {
    if (this.running.size === 0) return;
    for (let parent = dirname(path); parent !== dirname(parent); parent = dirname(parent)) await this.running.get(parent);
  }

  /** Waits until every started write ended; throws the first failure. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
