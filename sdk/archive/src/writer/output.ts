import { Readable } from 'node:stream';

// A small file becomes three small appends (its headers, its data, the padding). Handed downstream one by one, each
// is a piece every stage of a backup (encryption, hashing, the fan-out, each destination's write) handles on its
// own: 50,000 small files made 150,000 pieces, each with its own buffers and write requests. Small appends are
// gathered into pieces of up to STAGING_BYTES instead; larger ones are handed over as they are.
const STAGING_BYTES = 256 * 1024;
/** Appends below this size are copied into a gathered piece (so a caller may reuse their buffer at once). */
export const GATHER_BELOW_BYTES = 64 * 1024;

/**
 * The archive's byte stream. Producers `await append(bytes)`, which resolves only once the consumer has asked for
 * more (Readable backpressure), so at most one chunk beyond the stream's high-water mark (and one gathered piece of
 * small appends) is ever held.
 */
export class ArchiveOutput extends Readable {
  /** Bytes appended so far: the offset the next byte will have in the archive. */
  position = 0;
  private waiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private staging: Buffer | undefined;
  private stagingFill = 0;

  constructor() {
    super({ highWaterMark: 1024 * 1024 });
  }

  /** Appends bytes to the archive and waits while the consumer is behind. */
  async append(bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    if (this.destroyed) throw new Error('the archive stream was closed before the archive was finished');
    this.position += bytes.length;
    if (bytes.length < GATHER_BELOW_BYTES) {
      if (this.stagingFill + bytes.length > STAGING_BYTES) await this.pushStaged();
      this.staging ??= Buffer.allocUnsafeSlow(STAGING_BYTES);
      this.stagingFill += bytes.copy(this.staging, this.stagingFill);
      return;
    }
    await this.pushStaged();
    await this.pushAndWait(bytes);
  }

  /** Ends the stream once the last bytes are emitted. */
  endOutput(): void {
    // At most one gathered piece goes past the high-water mark here; the stream ends right after it.
    if (this.stagingFill > 0) this.push(this.takeStaged());
    this.push(null);
  }

  override _read(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.staging = undefined;
    this.stagingFill = 0;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error ?? new Error('the archive stream was closed before the archive was finished'));
    callback(error);
  }

  private async pushStaged(): Promise<void> {
    if (this.stagingFill > 0) await this.pushAndWait(this.takeStaged());
  }

  /** A copy of the gathered bytes: the staging buffer itself is reused for the next ones. */
  private takeStaged(): Buffer {
    const piece = Buffer.from((this.staging as Buffer).subarray(0, this.stagingFill));
    this.stagingFill = 0;
    return piece;
  }

  private async pushAndWait(bytes: Buffer): Promise<void> {
    if (this.destroyed) throw new Error('the archive stream was closed before the archive was finished');
    if (this.push(bytes)) return;
    await new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}
