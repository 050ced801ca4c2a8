import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createArchiveWriter, readIndex } from '../src/index.js';
import { ArchiveOutput } from '../src/writer/output.js';

/** Every piece as it was pushed ('data' events; an async iterator would join what is buffered). */
function drain(stream: Readable): Promise<Buffer[]> {
  const pieces: Buffer[] = [];
  return new Promise((resolve, reject) => {
    stream.on('data', (piece: Buffer) => pieces.push(piece));
    stream.once('end', () => resolve(pieces)).once('error', reject);
  });
}

describe('archive output pieces', () => {
  it('gathers small appends into larger pieces, keeps large ones whole, and loses no byte or order', async () => {
    const output = new ArchiveOutput();
    const draining = drain(output);
    const expected: Buffer[] = [];
    for (let index = 0; index < 3000; index += 1) {
      // Small appends like a small file's header, data and padding, with a large one now and then.
      const bytes = index % 500 === 499 ? Buffer.alloc(300 * 1024, index % 251) : Buffer.from(`piece ${index};`.repeat(1 + (index % 40)));
      expected.push(bytes);
      await output.append(bytes);
    }
    const total = Buffer.concat(expected);
    expect(output.position).toBe(total.length);
    output.endOutput();
    const received = await draining;
    expect(Buffer.concat(received).equals(total)).toBe(true);
    // 3000 appends; one piece per append would be 3000.
    expect(received.length).toBeLessThan(40);
    expect(received.filter((piece) => piece.length === 300 * 1024)).toHaveLength(6);
    expect(Math.max(...received.map((piece) => piece.length))).toBeLessThanOrEqual(300 * 1024);
  });

  it('writes an archive of many small files in few pieces that reads back whole', async () => {
    const writer = createArchiveWriter({ compression: 'zstd' });
    const draining = drain(writer);
    for (let index = 0; index < 400; index += 1) {
      const content = Buffer.from(`file ${index}\n`.repeat(index % 7));
      await writer.addFile({ path: `dir/file-${index}.txt`, size: content.length, mtime: new Date(1_700_000_000_000) }, Readable.from([content]));
    }
    const result = await writer.finish();
    const pieces = await draining;
    const archive = Buffer.concat(pieces);
    expect(archive.length).toBe(result.archiveSize);
    expect(pieces.length).toBeLessThan(400);
    const index = await readIndex({ sidecar: Readable.from(result.indexFile.chunks()) });
    expect(index.entries).toHaveLength(400);
    const last = index.entries.at(-1)!;
    // The last member's bytes sit where the index says they do.
    expect(last.offset + last.length).toBeLessThanOrEqual(archive.length);
    expect(archive.subarray(last.offset, last.offset + 512).toString('latin1')).toContain('PaxHeader');
  });
});
