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

/**
 * Remembers small compressed frames that decoded to zeros only, by their exact bytes: the same frame always decodes
 * the same way, so the next identical frame (the next MiB of the same hole) is known to be zeros without decoding it.
 */
export class ZeroFrameMemory {
  private readonly frames = new Map<string, number>();

  constructor(
    private readonly maxFrameBytes = 1024,
    private readonly maxFrames = 64,
  ) {}

  /** The decoded length of a frame known to decode to zeros, or undefined. */
  lengthOf(frame: Buffer): number | undefined {
    if (frame.length > this.maxFrameBytes || this.frames.size === 0) return undefined;
    return this.frames.get(frame.toString('latin1'));
  }

  /** Records what `frame` decoded to, when that is a run of zeros from a small frame. */
  learn(frame: Buffer, content: Buffer): void {
    if (frame.length > this.maxFrameBytes || this.frames.size >= this.maxFrames || content.length === 0 || !isAllZero(content)) return;
    this.frames.set(frame.toString('latin1'), content.length);
  }
}
