import { Readable } from 'node:stream';
import { aborted } from './errors.js';

// The tar leaves in chunks of this size (the last one shorter): headers, small bodies and their padding are gathered
// into one buffer instead of three pieces per file, each a trip through every stage of the engine's pipeline (counter,
// compressor, hashes). A tree of 64,000 small files was about 200,000 pieces before (docs/benchmarks.md, 2026-12-07).
export const CHUNK_BYTES = 256 * 1024;
// A large file's body after its first piece goes into chunks of this size (TarOutput.reserve's `fresh`). Under the
// server's MALLOC_MMAP_THRESHOLD_ of 128 KiB (tooling/bench/lib/server-node-flags.mjs, package.json "start"), so glibc
// hands out reused heap memory instead of a fresh mapping whose every page faults in: 25-60 thousand minor faults
// per GiB instead of 270 thousand, the dump alone 0.69 instead of 1.2 s. Small, the chunk is also still in the CPU's
// cache when the engine copies it on (zstd's pipe, the checksums). 1 GiB of 8 MiB files, same runs alternating:
// 256 KiB 4.76 s, 128 KiB 4.02 s; 128 KiB 3.74 s, 120 KiB 3.44 s; 512 KiB-1 MiB were slower still
// (docs/benchmarks.md, "Large files, checksums, progress writes").
export const BODY_CHUNK_BYTES = 120 * 1024;
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
  // Allocated when the first byte goes in (its size depends on what goes in first); undefined after a flush.
  private chunk: Buffer | undefined;
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
      const chunk = this.current();
      const copied = bytes.copy(chunk, this.used, from);
      this.used += copied;
      from += copied;
      if (this.used === chunk.length) this.flush();
    }
  }

  /** Appends `count` zero bytes (padding). */
  zeros(count: number): void {
    let left = count;
    while (left > 0) {
      const chunk = this.current();
      const length = Math.min(left, chunk.length - this.used);
      chunk.fill(0, this.used, this.used + length);
      this.used += length;
      left -= length;
      if (this.used === chunk.length) this.flush();
    }
  }

  /**
   * Room for at least `length` bytes at the end of the current chunk, to read into directly; what was put there counts
   * once {@link TarOutput.commit} says how much. A chunk started here is `fresh` bytes long (at least `length`).
   */
  reserve(length: number, fresh = CHUNK_BYTES): { buffer: Buffer; offset: number; room: number } {
    if (length > fresh || fresh > CHUNK_BYTES) throw new RangeError(`cannot reserve ${length} bytes in a chunk of ${fresh} (at most ${CHUNK_BYTES})`);
    if (this.chunk && this.chunk.length - this.used < length) this.flush();
    const chunk = this.current(fresh);
    return { buffer: chunk, offset: this.used, room: chunk.length - this.used };
  }

  /** Counts `length` bytes written into the room {@link TarOutput.reserve} gave. */
  commit(length: number): void {
    this.used += length;
    if (this.used === this.chunk?.length) this.flush();
  }

  /** Hands on the chunk being filled, if it holds anything. */
  flush(): void {
    if (this.used === 0 || !this.chunk) return;
    const full = this.chunk.subarray(0, this.used);
    this.chunk = undefined;
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

  /** The chunk being filled; a new one of `size` bytes when there is none. */
  private current(size = CHUNK_BYTES): Buffer {
    this.chunk ??= Buffer.allocUnsafe(size);
    return this.chunk;
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
