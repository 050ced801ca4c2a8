/**
 * Reads a small stream whole (a tail, an index, a manifest). `limit` bounds the memory a corrupt or hostile source can
 * make it take: past it, the error `tooLarge` makes is thrown.
 */
export async function collectBytes(source: AsyncIterable<Uint8Array | string>, limit = Infinity, tooLarge?: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source) {
    // A copy: a member's chunks can be views into the reader's buffer, which is reused for the next read.
    const buffer = Buffer.from(chunk);
    total += buffer.length;
    if (total > limit) throw tooLarge?.() ?? new RangeError(`more than ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}
