import { Transform, type TransformCallback } from 'node:stream';

/** Progress callback: bytes so far and, when known, the expected total. */
export type ProgressListener = (bytes: number, total: number | undefined) => void;

/** A pass-through that counts bytes and reports progress at most every `intervalMs`. */
export class ByteCounter extends Transform {
  bytes = 0;
  private lastReport = 0;

  constructor(
    private readonly onProgress?: ProgressListener,
    private readonly total?: number,
    private readonly intervalMs = 500,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    const now = Date.now();
    if (this.onProgress && now - this.lastReport >= this.intervalMs) {
      this.lastReport = now;
      this.onProgress(this.bytes, this.total);
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.onProgress?.(this.bytes, this.total);
    callback();
  }
}

/** Creates a {@link ByteCounter}. */
export function createByteCounter(onProgress?: ProgressListener, total?: number, intervalMs?: number): ByteCounter {
  return new ByteCounter(onProgress, total, intervalMs);
}
