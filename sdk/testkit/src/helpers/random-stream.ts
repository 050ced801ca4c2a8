import { createCipheriv, createHash } from 'node:crypto';
import { Readable } from 'node:stream';

/** Options of {@link deterministicStream}. */
export interface DeterministicStreamOptions {
  /** Same seed, same bytes: lets a test compare a round trip without keeping the original. */
  seed?: string;
  /** Chunk size in bytes (default 64 KiB). */
  chunkSize?: number;
  /** Emit an error after this many bytes instead of finishing (simulates a source that dies midway). */
  failAfterBytes?: number;
}

/**
 * A backpressured stream of `totalBytes` pseudo-random bytes generated on the fly (AES-256-CTR keystream of the
 * seed), so a 64 MiB test body never sits in memory.
 */
export function deterministicStream(totalBytes: number, options: DeterministicStreamOptions = {}): Readable {
  const seed = createHash('sha256').update(options.seed ?? 'holdfast-testkit').digest();
  const cipher = createCipheriv('aes-256-ctr', seed, Buffer.alloc(16));
  const chunkSize = options.chunkSize ?? 64 * 1024;
  const zeros = Buffer.alloc(chunkSize);
  let produced = 0;
  return new Readable({
    highWaterMark: chunkSize,
    read() {
      if (options.failAfterBytes !== undefined && produced >= options.failAfterBytes) {
        this.destroy(new Error(`deterministic stream failed on purpose after ${produced} bytes`));
        return;
      }
      const remaining = totalBytes - produced;
      if (remaining <= 0) {
        this.push(null);
        return;
      }
      const size = Math.min(chunkSize, remaining, options.failAfterBytes !== undefined ? Math.max(1, options.failAfterBytes - produced) : Infinity);
      produced += size;
      this.push(cipher.update(size === chunkSize ? zeros : zeros.subarray(0, size)));
    },
  });
}
