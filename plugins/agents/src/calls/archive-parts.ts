/**
 * Framing of the byte streams of seekable archive calls (docs/agents.md "Seekable archives through an agent"): one
 * call stream carries several parts (the archive, then its index file; or a snapshot, then member ranges), each
 * as a 1-byte kind, a uint32 big-endian length and that many bytes. Shared by the server and the agent.
 */

export const PART = {
  /** archiveDump output: bytes of the archive. archiveRestore input: bytes of the current member range. */
  bytes: 0,
  /** archiveDump output: bytes of the index file (after every archive byte). */
  index: 1,
  /** archiveRestore input: the snapshot to restore, as JSON (first, once). */
  snapshot: 2,
  /** archiveRestore input: a member range starts, as JSON `{ archive, offset, length }`. */
  range: 3,
} as const;

/** Largest payload of one part: a larger piece of bytes is cut into several parts. */
export const MAX_PART_BYTES = 256 * 1024;
/** Largest JSON part (a snapshot of 50,000 files is about 15 MB). */
export const MAX_JSON_PART_BYTES = 256 * 1024 * 1024;
const HEADER_BYTES = 5;

/** One part's frame(s): `payload` cut into pieces of at most MAX_PART_BYTES (a JSON part is never cut). */
export function* partFrames(kind: number, payload: Buffer): Generator<Buffer> {
  if (kind === PART.snapshot || kind === PART.range) {
    yield Buffer.concat([header(kind, payload.length), payload]);
    return;
  }
  for (let at = 0; at < payload.length; at += MAX_PART_BYTES) {
    const piece = payload.subarray(at, at + MAX_PART_BYTES);
    yield Buffer.concat([header(kind, piece.length), piece]);
  }
}

function header(kind: number, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(HEADER_BYTES);
  bytes.writeUInt8(kind, 0);
  bytes.writeUInt32BE(length, 1);
  return bytes;
}

/**
 * Reads the parts of a framed stream one after the other; fails on an unknown kind or an oversized part. Chunks are
 * joined only once a whole part is there, so a large snapshot is copied once, not once per chunk.
 */
export async function* readParts(stream: AsyncIterable<Buffer>, kinds: readonly number[]): AsyncGenerator<{ kind: number; payload: Buffer }> {
  let chunks: Buffer[] = [];
  let total = 0;
  const joined = () => {
    if (chunks.length > 1) chunks = [Buffer.concat(chunks, total)];
    return chunks[0] ?? Buffer.alloc(0);
  };
  for await (const chunk of stream) {
    chunks.push(chunk);
    total += chunk.length;
    while (total >= HEADER_BYTES) {
      const head = (chunks[0] as Buffer).length >= HEADER_BYTES ? (chunks[0] as Buffer) : joined();
      const kind = head.readUInt8(0);
      const length = head.readUInt32BE(1);
      if (!kinds.includes(kind)) throw new Error(`archive stream: unexpected part kind ${kind}`);
      const limit = kind === PART.snapshot || kind === PART.range ? MAX_JSON_PART_BYTES : MAX_PART_BYTES;
      if (length > limit) throw new Error(`archive stream: a part of ${length} bytes is larger than allowed`);
      if (total < HEADER_BYTES + length) break;
      const all = joined();
      yield { kind, payload: all.subarray(HEADER_BYTES, HEADER_BYTES + length) };
      chunks = [all.subarray(HEADER_BYTES + length)];
      total = (chunks[0] as Buffer).length;
    }
  }
  if (total > 0) throw new Error('archive stream: it ended inside a part');
}
