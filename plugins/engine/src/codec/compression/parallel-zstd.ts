import { Transform, type TransformCallback } from 'node:stream';
import { sharedZstdPool, type ZstdWorkerPool } from './zstd-worker-pool.js';

/** Options of {@link ParallelZstdCompressor}. */
export interface ParallelZstdOptions {
  level: number;
  /** Worker threads compressing at the same time. */
  threads: number;
  /** Uncompressed bytes per independent frame. */
  frameBytes: number;
  /** The threads to use; the process's shared pool unless a test brings its own. */
  pool?: ZstdWorkerPool;
}

/**
 * ZSTD compression on worker threads. The input is cut into blocks of `frameBytes`; each block becomes one complete
 * zstd frame, compressed on one of `threads` workers, and the frames are pushed in input order. A concatenation of
 * zstd frames is a valid zstd stream (`zstd -d` and any streaming decoder read it as one), so the output stays a
 * standard `.zst` file.
 *
 * Backpressure: at most `threads + 1` blocks are in the workers at once; the write callback is held while that many
 * are out, so a slow destination slows the source down instead of filling memory. The main thread only copies
 * bytes into blocks and hands them over (the block's memory is transferred, not copied).
 *
 * The threads belong to a pool shared by every stream of the process (see ZstdWorkerPool): a stream that ends or
 * fails stops nothing, it only stops listening to its frames still out.
 */
export class ParallelZstdCompressor extends Transform {
  private readonly pool: ZstdWorkerPool;
  private readonly maxInFlight: number;
  private block: Buffer | null = null;
  private blockFill = 0;
  private blocksSent = 0;
  private nextToPush = 0;
  private inFlight = 0;
  private readonly finished = new Map<number, Buffer>();
  /** Blocks back from the workers, reused: the stream allocates at most `threads + 2` blocks in its life. */
  private readonly freeBlocks: Buffer[] = [];
  private heldWrite: TransformCallback | null = null;
  private heldFlush: TransformCallback | null = null;
  private failed = false;

  constructor(private readonly options: ParallelZstdOptions) {
    super();
    this.pool = options.pool ?? sharedZstdPool();
    this.maxInFlight = options.threads + 1;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      this.block ??= this.freeBlocks.pop() ?? Buffer.allocUnsafeSlow(this.options.frameBytes);
      const copied = chunk.copy(this.block, this.blockFill, offset);
      this.blockFill += copied;
      offset += copied;
      if (this.blockFill === this.options.frameBytes) this.sendBlock();
    }
    if (this.inFlight >= this.maxInFlight) this.heldWrite = callback;
    else callback();
  }

  override _flush(callback: TransformCallback): void {
    // An empty input still gets one (empty) frame, so the file is a valid zstd stream that decodes to nothing.
    if (this.blockFill > 0 || this.blocksSent === 0) this.sendBlock();
    if (this.inFlight === 0) callback();
    else this.heldFlush = callback;
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    // Frames still out come back to a stream that ignores them; the shared threads go on serving other streams.
    this.failed = true;
    callback(error);
  }

  private sendBlock(): void {
    const block = this.block ?? Buffer.allocUnsafeSlow(this.options.frameBytes);
    const length = this.blockFill;
    this.block = null;
    this.blockFill = 0;
    const sequence = this.blocksSent++;
    this.inFlight++;
    this.pool.compress(block, length, this.options.level, this.options.threads, (error, frame, returned) => {
      if (returned) this.freeBlocks.push(returned);
      this.onFrame(sequence, error, frame);
    });
  }

  private onFrame(sequence: number, error: Error | null, frame?: Buffer): void {
    if (this.failed) return;
    if (error) {
      this.failed = true;
      this.destroy(error);
      return;
    }
    this.finished.set(sequence, frame!);
    this.inFlight--;
    // Frames come back from different workers in any order; push only the next one in input order.
    for (let next = this.finished.get(this.nextToPush); next; next = this.finished.get(this.nextToPush)) {
      this.finished.delete(this.nextToPush);
      this.nextToPush++;
      this.push(next);
    }
    if (this.heldWrite && this.inFlight < this.maxInFlight) {
      const callback = this.heldWrite;
      this.heldWrite = null;
      callback();
    }
    if (this.heldFlush && this.inFlight === 0) {
      const callback = this.heldFlush;
      this.heldFlush = null;
      callback();
    }
  }
}
