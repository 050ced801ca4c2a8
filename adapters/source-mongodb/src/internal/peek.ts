import { Readable } from 'node:stream';

/**
 * Reads at least `size` bytes (or all there is) and returns them with a stream of the whole input, head included.
 * Iterating by hand, rather than breaking out of `for await`, keeps the source open for the replay.
 */
export async function peekHead(stream: Readable, size: number): Promise<{ head: Buffer; whole: Readable }> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    length += next.value.length;
  }
  const whole = Readable.from(
    (async function* replay() {
      yield* chunks;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    })(),
  );
  return { head: Buffer.concat(chunks), whole };
}
