// Shared by the cloud-drive destinations (Dropbox, Google Drive, OneDrive), whose upload sessions take fixed-size parts.
import type { Readable } from 'node:stream';

/**
 * Cuts a stream into chunks of exactly `size` bytes (the last one shorter, possibly empty when the stream ends on a
 * boundary, and `isLast` set). Every chunk is a view of ONE reused buffer, so memory stays at one chunk however long
 * the stream (fresh buffers per chunk pile up as external memory until a late GC): the consumer must be done with a
 * chunk (its request answered) before it asks for the next, which also gives backpressure.
 */
export async function* chunksOf(body: Readable, size: number): AsyncGenerator<{ bytes: Buffer; offset: number; isLast: boolean }> {
  const buffer = Buffer.allocUnsafeSlow(size);
  let held = 0;
  let offset = 0;
  for await (const piece of body as AsyncIterable<Buffer | string>) {
    let rest = typeof piece === 'string' ? Buffer.from(piece) : piece;
    while (rest.length > 0) {
      const taken = rest.copy(buffer, held, 0, Math.min(rest.length, size - held));
      held += taken;
      rest = rest.subarray(taken);
      if (held === size) {
        yield { bytes: buffer, offset, isLast: false };
        offset += size;
        held = 0;
      }
    }
  }
  yield { bytes: buffer.subarray(0, held), offset, isLast: true };
}
