import { Readable } from 'node:stream';

/** Options of {@link failingAfterShare}. */
export interface FailingAfterShareOptions {
  /** Size of the pieces the bytes come in (default 16 KiB). */
  pieceSize?: number;
  /** Pause before the error, so the consumer processes what it got and the failure is really part-way (default 300 ms). */
  pauseMs?: number;
  /** Message of the error (default "checksum mismatch"). */
  message?: string;
}

/**
 * The first `share` (0..1) of `bytes` in small pieces, then an error: what the engine's checksum gate does to a bad
 * file part-way through a restore.
 */
export function failingAfterShare(bytes: Buffer, share: number, options: FailingAfterShareOptions = {}): Readable {
  const { pieceSize = 16 * 1024, pauseMs = 300, message = 'checksum mismatch' } = options;
  const cut = Math.floor(bytes.length * share);
  return Readable.from(
    (async function* pieces() {
      for (let at = 0; at < cut; at += pieceSize) yield bytes.subarray(at, Math.min(cut, at + pieceSize));
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      throw new Error(message);
    })(),
  );
}
