import { ArchiveFormatError } from '../errors.js';

/**
 * Pulls exact byte counts from a stream of chunks. Pull-based, so a slow consumer slows the source (backpressure)
 * and nothing beyond one source chunk is buffered.
 */
export class ByteReader {
  /** Bytes consumed so far, counted from `startOffset`. */
  position: number;
  private readonly iterator: AsyncIterator<Buffer | string>;
  private pending: Buffer = Buffer.alloc(0);
  private isDone = false;

  constructor(source: AsyncIterable<Buffer | string>, startOffset = 0) {
    this.iterator = source[Symbol.asyncIterator]();
    this.position = startOffset;
  }

  /** Reads exactly `length` bytes, or returns undefined at a clean end of stream (no byte left at all). */
  async readExact(length: number): Promise<Buffer | undefined> {
    const parts: Buffer[] = [];
    let collected = 0;
    while (collected < length) {
      const chunk = await this.next(length - collected);
      if (!chunk) {
        if (collected === 0) return undefined;
        throw new ArchiveFormatError(`unexpected end of archive at byte ${this.position}`);
      }
      parts.push(chunk);
      collected += chunk.length;
    }
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, collected);
  }

  /** Yields exactly `length` bytes as they arrive; fails if the stream ends first. */
  async *take(length: number): AsyncGenerator<Buffer> {
    let remaining = length;
    while (remaining > 0) {
      const chunk = await this.next(remaining);
      if (!chunk) throw new ArchiveFormatError(`unexpected end of archive at byte ${this.position} (${remaining} bytes missing)`);
      remaining -= chunk.length;
      yield chunk;
    }
  }

  /** Discards `length` bytes. */
  async skip(length: number): Promise<void> {
    for await (const chunk of this.take(length)) void chunk;
  }

  /** Stops reading the source (lets a range request or file stream close early). */
  async close(): Promise<void> {
    this.isDone = true;
    await this.iterator.return?.();
  }

  private async next(max: number): Promise<Buffer | undefined> {
    if (this.pending.length === 0) {
      if (this.isDone) return undefined;
      const result = await this.iterator.next();
      if (result.done) {
        this.isDone = true;
        return undefined;
      }
      this.pending = Buffer.isBuffer(result.value) ? result.value : Buffer.from(result.value);
    }
    const chunk = this.pending.subarray(0, max);
    this.pending = this.pending.subarray(chunk.length);
    this.position += chunk.length;
    return chunk;
  }
}
