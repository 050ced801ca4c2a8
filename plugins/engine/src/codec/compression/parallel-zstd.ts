import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { compressionSlots, ConcurrencyLimit } from './pool-slots.js';
import { compressZstdFrame } from './zstd-bindings.js';

/** `block` is the input block handed back for reuse. */
export type FrameCallback = (error: Error | null, frame?: Buffer, block?: Buffer) => void;

/** Compresses `block[0..length)` into one complete frame; hands the block back for reuse with the frame. */
export type BlockCompressor = (block: Buffer, length: number, done: FrameCallback) => void;

/** Options of {@link ParallelBlockCompressor}. */
export interface ParallelBlockOptions {
  /** Blocks compressed at the same time. */
  threads: number;
  /** Uncompressed bytes per independent frame. */
  frameBytes: number;
  compressBlock: BlockCompressor;
}

/** Options of {@link ParallelZstdCompressor}. */
export interface ParallelZstdOptions {
  level: number;
  /** Frames compressed at the same time. */
  threads: number;
  /** Uncompressed bytes per independent frame. */
  frameBytes: number;
  /** Tests replace the binding (to watch how many frames run at once, or to fail one). */
  compressFrame?: FrameCompressor;
  /** Tests bring their own process-wide slots. */
  slots?: ConcurrencyLimit;
}

/**
 * Compression in independent blocks, several at once off the main thread. The input is cut into blocks of
 * `frameBytes`; each becomes one complete frame (a zstd frame, a gzip member), and the frames are pushed in input
 * order. Concatenated frames are a valid stream of both formats (`zstd -d`, `gunzip` and Node's decoders read them as
 * one), so the output stays a standard `.zst` or `.gz` file.
 *
 * Backpressure: at most `threads + 2` blocks are out at once, counted from the moment a block is sent until its frame
 * is pushed in order (a frame that finished before an earlier one still counts: it waits in memory). The write
 * callback is held while that many are out, so a slow destination or one slow frame slows the source down instead of
 * filling memory.
 */
export class ParallelBlockCompressor extends Transform {
  private readonly maxInFlight: number;
  private block: Buffer | null = null;
  private blockFill = 0;
  private blocksSent = 0;
  private nextToPush = 0;
  private readonly finished = new Map<number, Buffer>();
  /** Blocks handed back with their frames, reused: the stream allocates at most `threads + 3` blocks in its life. */
  private readonly freeBlocks: Buffer[] = [];
  private heldWrite: TransformCallback | null = null;
  private heldFlush: TransformCallback | null = null;
  private failed = false;

  constructor(private readonly options: ParallelBlockOptions) {
    super();
    // threads + 2, not + 1: with one spare block a thread that finishes while the oldest frame is still compressing
    // has the next block waiting; threads + 1 compressed 512 MiB 5-10 % slower (same run, 2 threads).
    this.maxInFlight = options.threads + 2;
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
    if (this.blocksOut() >= this.maxInFlight) this.heldWrite = callback;
    else callback();
  }

  override _flush(callback: TransformCallback): void {
    // An empty input still gets one (empty) frame, so the file is a valid zstd stream that decodes to nothing.
    if (this.blockFill > 0 || this.blocksSent === 0) this.sendBlock();
    if (this.blocksOut() === 0) callback();
    else this.heldFlush = callback;
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    // Frames still out come back to a stream that ignores them; the shared threads go on serving other streams.
    this.failed = true;
    callback(error);
  }

  /** Blocks sent whose frames are not pushed yet: compressing, or finished and waiting for an earlier frame. */
  private blocksOut(): number {
    return this.blocksSent - this.nextToPush;
  }

  private sendBlock(): void {
    const block = this.block ?? Buffer.allocUnsafeSlow(this.options.frameBytes);
    const length = this.blockFill;
    this.block = null;
    this.blockFill = 0;
    const sequence = this.blocksSent++;
    this.options.compressBlock(block, length, (error, frame, returned) => {
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
    // Frames come back from different threads in any order; push only the next one in input order.
    for (let next = this.finished.get(this.nextToPush); next; next = this.finished.get(this.nextToPush)) {
      this.finished.delete(this.nextToPush);
      this.nextToPush++;
      this.push(next);
    }
    if (this.heldWrite && this.blocksOut() < this.maxInFlight) {
      const callback = this.heldWrite;
      this.heldWrite = null;
      callback();
    }
    if (this.heldFlush && this.blocksOut() === 0) {
      const callback = this.heldFlush;
      this.heldFlush = null;
      callback();
    }
  }
}

/** Compresses one block's bytes into one frame, off the main thread. */
export type FrameCompressor = (input: Buffer) => Promise<Buffer>;

/**
 * A BlockCompressor that runs `compressFrame` for at most `threads` blocks of its stream at once and within the
 * process's compression slots (see compressionSlots), so `threads` means frames compressed at the same time.
 */
function zstdOnThreadPool(threads: number, compressFrame: FrameCompressor, slots: ConcurrencyLimit = compressionSlots): BlockCompressor {
  const stream = new ConcurrencyLimit(threads);
  return (block, length, done) =>
    stream.run((releaseStream) =>
      slots.run((releaseSlot) => {
        const finish = (error: Error | null, frame?: Buffer): void => {
          releaseSlot();
          releaseStream();
          done(error, frame, block);
        };
        compressFrame(block.subarray(0, length)).then(
          (frame) => finish(null, frame),
          (error: unknown) => finish(new Error(`zstd compression failed: ${error instanceof Error ? error.message : String(error)}`)),
        );
      }),
    );
}

/**
 * ZSTD in independent frames on libuv's thread pool (see zstd-bindings.ts for why not on worker threads), `threads`
 * frames at once. A stream that ends or fails stops nothing: frames still being compressed finish on the pool and
 * are dropped.
 */
export class ParallelZstdCompressor extends ParallelBlockCompressor {
  constructor(options: ParallelZstdOptions) {
    const compressFrame = options.compressFrame ?? ((input: Buffer) => compressZstdFrame(input, options.level));
    super({
      threads: options.threads,
      frameBytes: options.frameBytes,
      compressBlock: zstdOnThreadPool(options.threads, compressFrame, options.slots),
    });
  }
}

// zlib's asynchronous API hands each output piece (16 KiB by default) back to the main thread before it deflates on:
// a 2 MiB member took about 64 round trips between the thread pool and the main thread. 256 KiB pieces take 4-8, and
// a 512 MiB directory backup went from 10.4 to 7.7-8.0 s with the same bytes out (docs/benchmarks.md).
const GZIP_OUTPUT_CHUNK_BYTES = 256 * 1024;

/**
 * GZIP in independent members on libuv's thread pool (zlib's asynchronous API), `threads` at once: a backup is no
 * longer bound to one core by deflate. Each member costs 18 bytes of header and trailer, and its dictionary starts
 * empty: with 512 KiB blocks the output grows by well under 0.1 %.
 */
export class ParallelGzipCompressor extends ParallelBlockCompressor {
  constructor(options: { level: number; threads: number; frameBytes: number }) {
    // Not limited to `threads` at once like ZSTD: zlib hands each output piece back to the main thread between pieces,
    // freeing its pool thread, so all `threads + 2` members in the pool at once kept it busier; limited to `threads`,
    // a 1 GiB directory GZIP backup was 10-30 % slower with a higher peak (docs/benchmarks.md, session 15).
    super({
      threads: options.threads,
      frameBytes: options.frameBytes,
      compressBlock: (block, length, done) =>
        zlib.gzip(block.subarray(0, length), { level: options.level, chunkSize: GZIP_OUTPUT_CHUNK_BYTES }, (error, frame) =>
          error ? done(error, undefined, block) : done(null, frame, block),
        ),
    });
  }
}
