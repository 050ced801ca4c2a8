import { Readable } from 'node:stream';

/**
 * The archive's byte stream. Producers `await append(bytes)`, which resolves only once the consumer has asked for
 * more (Readable backpressure), so at most one chunk beyond the stream's high-water mark is ever held.
 */
export class ArchiveOutput extends Readable {
  /** Bytes emitted so far: the offset the next byte will have in the archive. */
  position = 0;
  private waiter: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor() {
    super({ highWaterMark: 1024 * 1024 });
  }

  /** Appends bytes to the archive and waits while the consumer is behind. */
  async append(bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    if (this.destroyed) throw new Error('the archive stream was closed before the archive was finished');
    this.position += bytes.length;
    if (this.push(bytes)) return;
    await new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Ends the stream once the last bytes are emitted. */
  endOutput(): void {
    this.push(null);
  }

  override _read(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error ?? new Error('the archive stream was closed before the archive was finished'));
    callback(error);
  }
}
