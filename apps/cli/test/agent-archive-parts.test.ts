// The framing of seekable archive call streams (plugins/agents/src/calls/archive-parts.ts): parts survive any
// chunking of the stream, large byte parts are cut, and a hostile or broken stream fails instead of being trusted.
import { randomBytes } from 'node:crypto';
import { PART, partFrames, readParts } from '@holdfast/agents/protocol';
import { describe, expect, it } from 'vitest';

async function* rechunked(frames: Buffer[], size: number): AsyncGenerator<Buffer> {
  const all = Buffer.concat(frames);
  for (let at = 0; at < all.length; at += size) yield all.subarray(at, at + size);
}
async function collect(stream: AsyncIterable<Buffer>, kinds: number[]) {
  const parts: { kind: number; payload: Buffer }[] = [];
  for await (const part of readParts(stream, kinds)) parts.push({ kind: part.kind, payload: Buffer.from(part.payload) });
  return parts;
}

describe('archive stream parts', () => {
  it('reads back a snapshot, ranges and 1 MB of bytes whatever the chunking', async () => {
    const snapshot = Buffer.from(JSON.stringify({ entries: Array.from({ length: 2000 }, (_, i) => ({ path: `f${i}` })) }));
    const bytes = randomBytes(1_000_000);
    const frames = [...partFrames(PART.snapshot, snapshot), ...partFrames(PART.range, Buffer.from('{"archive":"a","offset":0,"length":1000000}')), ...partFrames(PART.bytes, bytes)];
    for (const size of [1, 7, 4096, 200_000, 5_000_000]) {
      const parts = await collect(rechunked(frames, size), [PART.snapshot, PART.range, PART.bytes]);
      expect(parts[0]!.payload.equals(snapshot)).toBe(true);
      expect(parts[1]!.kind).toBe(PART.range);
      const data = parts.slice(2);
      expect(data.every((part) => part.kind === PART.bytes && part.payload.length <= 256 * 1024)).toBe(true);
      expect(Buffer.concat(data.map((part) => part.payload)).equals(bytes)).toBe(true);
    }
  }, 60_000);

  it('refuses a kind the call does not take, an oversized part and a stream ending inside a part', async () => {
    await expect(collect(rechunked([...partFrames(PART.index, Buffer.from('x'))], 3), [PART.bytes])).rejects.toThrow('unexpected part kind 1');
    const huge = Buffer.from([PART.bytes, 0x10, 0, 0, 0]);
    await expect(collect(rechunked([huge], 5), [PART.bytes])).rejects.toThrow('larger than allowed');
    const cut = [...partFrames(PART.bytes, Buffer.alloc(100))][0]!.subarray(0, 50);
    await expect(collect(rechunked([cut], 10), [PART.bytes])).rejects.toThrow('ended inside a part');
  });
});
