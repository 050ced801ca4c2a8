import { Readable } from 'node:stream';

/** The bytes before a delimiter and a stream of everything after it. */
export interface SplitStream {
  /** Bytes up to the delimiter (excluded); all bytes read when the delimiter never came. */
  head: Buffer;
  isFound: boolean;
  rest: Readable;
}

/**
 * Reads `stream` until `delimiter` (at most `limit` bytes) and hands back the head plus the remainder as a stream.
 * Iterating by hand, rather than breaking out of `for await`, keeps the source open for the remainder.
 */
export async function splitAt(stream: Readable, delimiter: Buffer, limit: number): Promise<SplitStream> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buffered = Buffer.alloc(0);
  let at = -1;
  while (buffered.length < limit) {
    const next = await iterator.next();
    if (next.done) break;
    buffered = Buffer.concat([buffered, next.value]);
    at = buffered.indexOf(delimiter, Math.max(0, buffered.length - next.value.length - delimiter.length));
    if (at !== -1) break;
  }
  const isFound = at !== -1;
  const leftover = isFound ? buffered.subarray(at + delimiter.length) : Buffer.alloc(0);
  const rest = Readable.from(
    (async function* remainder() {
      if (leftover.length > 0) yield leftover;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    })(),
  );
  return { head: isFound ? buffered.subarray(0, at) : buffered, isFound, rest };
}
