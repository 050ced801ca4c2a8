import { fdatasync } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';

/** Bytes written between two background flushes of a put's temp file. */
export const FLUSH_EVERY_BYTES = 8 * 1024 * 1024;

/** How a flush reaches the disk: `fs.fdatasync`'s signature (tests pass their own). */
export type DataSync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

/**
 * Passes a put's bytes through and, after every `everyBytes`, asks the kernel to write the temp file's data to disk
 * (`fdatasync`) in the background, one flush at a time.
 *
 * Why: Linux keeps written pages in memory until about a tenth of RAM is dirty, so without this a whole backup sat in
 * the page cache and the fsync before the rename wrote all of it at the end, with the pipeline already done. Measured
 * with 238 MiB puts fed at a 7 s backup's pace: one put ended 0.09-0.15 s after its source before and 0.07-0.08 s
 * with this, three parallel puts on one disk 0.31-0.36 s before and 0.14-0.16 s with it (docs/benchmarks.md,
 * "Session 11"). Flushed as it goes, the disk works while the dump and the compression do.
 *
 * A failed flush fails the put: the kernel reports a write-back error to a file descriptor once, so the final fsync
 * would not see it again. The end of the stream waits for the flush in flight, so the file is never closed under it.
 */
export class ProgressiveFlush extends Transform {
  private sinceFlush = 0;
  private inFlight: Promise<void> | undefined;
  private failure: NodeJS.ErrnoException | undefined;

  constructor(
    private readonly fd: number,
    private readonly everyBytes = FLUSH_EVERY_BYTES,
    private readonly sync: DataSync = fdatasync,
  ) {
    super();
  }

  /** Resolves once no flush is in flight (a failed put waits for it before removing its temp file). */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.failure) return callback(this.failure);
    this.sinceFlush += chunk.length;
    // Flushes what was written before this chunk: those bytes have reached the file (the write stream ran them).
    if (this.sinceFlush >= this.everyBytes && !this.inFlight) {
      this.sinceFlush = 0;
      this.startFlush();
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const pending = this.inFlight ?? Promise.resolve();
    void pending.then(() => callback(this.failure ?? null));
  }

  private startFlush(): void {
    this.inFlight = new Promise<void>((resolve) => {
      this.sync(this.fd, (error) => {
        // The file-system error itself (its code says ENOSPC, EIO, ...): the put names the operation around it.
        if (error && !this.failure) this.failure = error;
        this.inFlight = undefined;
        resolve();
      });
    });
  }
}
