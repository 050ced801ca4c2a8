// Stretches of zero bytes (holes of sparse files, preallocated images, empty database pages) compress to a few dozen
// bytes per MiB. Compressing each such MiB again when backing up, and decoding it into a fresh MiB when restoring,
// made a 9 GiB sparse file allocate 9 GiB of buffers each way: memory the garbage collector only reclaims once tens of
// MiB have piled up. Zero runs are recognised instead and served from one shared buffer of zeros.

/** Bytes of the shared zero buffer; longer runs are served in pieces of this size. */
const ZERO_PIECE_BYTES = 1024 * 1024;
let zeroBuffer: Buffer | undefined;

function zeros(): Buffer {
  zeroBuffer ??= Buffer.alloc(ZERO_PIECE_BYTES);
  return zeroBuffer;
}

/** True when every byte of `bytes` is zero. */
export function isAllZero(bytes: Buffer): boolean {
  for (let start = 0; start < bytes.length; start += ZERO_PIECE_BYTES) {
    const piece = bytes.subarray(start, start + ZERO_PIECE_BYTES);
    if (!piece.equals(zeros().subarray(0, piece.length))) return false;
  }
  return true;
}

/** `length` zero bytes as views of the shared buffer. Read-only: consumers must not write into them. */
export function* zeroPieces(length: number): Generator<Buffer> {
  for (let remaining = length; remaining > 0; remaining -= ZERO_PIECE_BYTES) yield zeros().subarray(0, Math.min(remaining, ZERO_PIECE_BYTES));
}

/** A map that keeps only the `capacity` most recently used entries (the least recently used one makes room). */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Re-inserted: a Map iterates in insertion order, so its first key is always the least recently used.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}

/**
 * Remembers small compressed frames that decoded to zeros only, by their exact bytes: the same frame always decodes
 * the same way, so the next identical frame (the next MiB of the same hole) is known to be zeros without decoding it.
 * The most recently seen frames are kept: a tree with hundreds of small zero-filled files of different sizes once
 * filled a memory that never forgot, and the 9 GiB sparse file restored after them was decoded MiB by MiB into fresh
 * buffers (ArrayBuffers up to 54 MiB, docs/benchmarks.md "Run 12").
 */
export class ZeroFrameMemory {
  private readonly frames: RecentMap<string, number>;

  constructor(
    private readonly maxFrameBytes = 1024,
    maxFrames = 64,
  ) {
    this.frames = new RecentMap(maxFrames);
  }

  /** The decoded length of a frame known to decode to zeros, or undefined. */
  lengthOf(frame: Buffer): number | undefined {
    if (frame.length > this.maxFrameBytes || this.frames.size === 0) return undefined;
    return this.frames.get(frame.toString('latin1'));
  }

  /** Records what `frame` decoded to, when that is a run of zeros from a small frame. */
  learn(frame: Buffer, content: Buffer): void {
    if (frame.length > this.maxFrameBytes || content.length === 0 || !isAllZero(content)) return;
    this.frames.set(frame.toString('latin1'), content.length);
  }
}
