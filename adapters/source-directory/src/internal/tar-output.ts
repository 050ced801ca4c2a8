import { Readable } from 'node:stream';
import { aborted } from './errors.js';

// The tar leaves in chunks of this size (the last one shorter): headers, small bodies and their padding are gathered
// into one buffer instead of three pieces per file, each a trip through every stage of the engine's pipeline (counter,
// compressor, hashes). A tree of 64,000 small files was about 200,000 pieces before (docs/benchmarks.md, 2026-12-07).
export const CHUNK_BYTES = 256 * 1024;
// Bytes the stream holds for its reader before the writer waits (besides the chunk being filled).
const HIGH_WATER_MARK = 1024 * 1024;
// What tar-stream's `finalize` writes at the end: two zero blocks.
const END_OF_ARCHIVE = Buffer.alloc(1024);

/**
 * The tar stream of one dump: the writer appends bytes (or reads straight into {@link TarOutput.reserve}'s room), full
 * chunks go to the reader, and {@link TarOutput.ready} waits while the reader has a megabyte not yet taken.
 */
export class TarOutput {
  readonly stream: Readable;
  /** Bytes handed to the stream so far. */
  bytes = 0;
  /** Called when the first chunk is handed on. */
  onFirstChunk: (() => void) | undefined;
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private blocked = false;
  private wake: (() => void) | undefined;

  constructor(private readonly signal: AbortSignal) {
    this.stream = new Readable({
      highWaterMark: HIGH_WATER_MARK,
      read: () => {
        this.blocked = false;
        this.wakeWriter();
      },
    });
    signal.addEventListener('abort', () => this.wakeWriter(), { once: true });
    this.stream.once('close', () => this.wakeWriter());
  }

  /** Copies `bytes` into the tar (handing on every chunk it fills). */
  append(bytes: Buffer): void {
    let from = 0;
    while (from < bytes.length) {
      const copied = bytes.copy(this.chunk, this.used, from);
      this.used += copied;
      from += copied;
      if (this.used === CHUNK_BYTES) this.flush();
    }
  }

  /** Appends `count` zero bytes (padding). */
  zeros(count: number): void {
    let left = count;
    while (left > 0) {
      const length = Math.min(left, CHUNK_BYTES - this.used);
      this.chunk.fill(0, this.used, this.used + length);
      this.used += length;
      left -= length;
      if (this.used === CHUNK_BYTES) this.flush();
    }
  }

  /**
   * Room for at least `length` bytes (at most a chunk) at the end of the current chunk, to read into directly; what
   * was put there counts once {@link TarOutput.commit} says how much.
   */
  reserve(length: number): { buffer: Buffer; offset: number; room: number } {
    if (length > CHUNK_BYTES) throw new RangeError(`cannot reserve ${length} bytes in a chunk of ${CHUNK_BYTES}`);
    if (CHUNK_BYTES - this.used < length) this.flush();
    return { buffer: this.chunk, offset: this.used, room: CHUNK_BYTES - this.used };
  }

  /** Counts `length` bytes written into the room {@link TarOutput.reserve} gave. */
  commit(length: number): void {
    this.used += length;
    if (this.used === CHUNK_BYTES) this.flush();
  }

  /** Hands on the chunk being filled, if it holds anything. */
  flush(): void {
    if (this.used === 0) return;
    const full = this.chunk.subarray(0, this.used);
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    if (this.bytes === 0) this.onFirstChunk?.();
    this.bytes += full.length;
    if (!this.stream.push(full)) this.blocked = true;
  }

  /** True while the reader is a megabyte behind (then {@link TarOutput.ready} waits); checked without a promise. */
  get waiting(): boolean {
    return this.blocked || this.signal.aborted || this.stream.destroyed;
  }

  /** Resolves at once unless the reader is a megabyte behind; rejects once the dump is aborted or the stream gone. */
  async ready(): Promise<void> {
    while (this.blocked) {
      this.throwIfStopped();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    this.throwIfStopped();
  }

  /** Ends the archive (two zero blocks) and the stream. */
  finish(): void {
    this.append(END_OF_ARCHIVE);
    this.flush();
    this.stream.push(null);
  }

  private throwIfStopped(): void {
    if (this.signal.aborted || this.stream.destroyed) throw aborted('dump');
  }

  private wakeWriter(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
