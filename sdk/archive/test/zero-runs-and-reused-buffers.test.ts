import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createArchiveWriter, openMember, readIndex, type Compression } from '../src/index.js';
import { compressPart } from '../src/compression.js';
import { isAllZero, RecentMap, ZeroFrameMemory, zeroPieces } from '../src/zero-runs.js';
import { countingFileRangeReader, makeTempDir, writeArchiveFile } from './support/archive-files.js';

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** A source like the directory source's: every chunk is a view of ONE buffer it reads into again. */
async function* reusingSource(content: Buffer, chunkBytes: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.alloc(chunkBytes);
  for (let start = 0; start < content.length; start += chunkBytes) {
    const length = content.copy(buffer, 0, start, start + chunkBytes);
    yield buffer.subarray(0, length);
    // Whatever the writer kept of the chunk it was handed is overwritten now, as a reused read buffer would be.
    buffer.fill(0xee);
  }
}

/** A sparse-like content: random data around long runs of zeros. */
function sparseContent(): Buffer {
  return Buffer.concat([randomBytes(100_000), Buffer.alloc(5 * MiB), randomBytes(7), Buffer.alloc(3 * MiB + 11), randomBytes(MiB)]);
}

async function roundTrip(compression: Compression, contents: Buffer[], chunkBytes: number): Promise<Buffer[]> {
  const work = await makeTempDir(`reuse-${compression}`);
  cleanups.push(work.cleanup);
  const archive = join(work.path, 'a.hfa');
  await writeArchiveFile(createArchiveWriter({ compression }), archive, async (writer) => {
    for (const [position, content] of contents.entries()) {
      await writer.addFile({ path: `f-${position}`, size: content.length, reusesBuffers: true }, reusingSource(content, chunkBytes));
    }
  });
  const { rangeReader } = countingFileRangeReader(archive);
  const index = await readIndex({ rangeReader, archiveSize: (await readFile(archive)).length });
  return Promise.all(index.entries.map((entry) => collect(openMember(rangeReader, entry))));
}

describe('sources that reuse their buffer', () => {
  for (const compression of ['none', 'gzip', 'zstd'] as Compression[]) {
    it(`keeps every byte of a ${compression} member although each chunk is overwritten after it was handed over`, async () => {
      const contents = [randomBytes(3 * MiB + 5), Buffer.from('small file\n'), sparseContent(), randomBytes(200_000)];
      // Chunks smaller than a part (parts are gathered across chunks) and larger than the output's gathering size.
      const restored = await roundTrip(compression, contents, 300 * 1024);
      restored.forEach((content, position) => expect(content.equals(contents[position] as Buffer)).toBe(true));
    });
  }
});

describe('zero runs', () => {
  it('writes a part of zeros as the same frame compressing it gives, and restores it from a shared buffer', async () => {
    const contents = [sparseContent()];
    const restored = await roundTrip('zstd', contents, MiB);
    expect(restored[0]?.equals(contents[0] as Buffer)).toBe(true);
    // The cached frame is the frame: same bytes as compressing a zero part directly.
    const direct = await compressPart('zstd', Buffer.alloc(MiB));
    const writer = createArchiveWriter({ compression: 'zstd' });
    const archive = collect(writer);
    await writer.addFile({ path: 'zeros', size: 2 * MiB }, Readable.from([Buffer.alloc(2 * MiB)]));
    await writer.finish();
    expect((await archive).indexOf(direct)).toBeGreaterThan(0);
  });

  it('remembers only small frames that decoded to zeros, by their exact bytes', async () => {
    const memory = new ZeroFrameMemory();
    const zeroFrame = await compressPart('zstd', Buffer.alloc(MiB));
    const dataFrame = await compressPart('zstd', Buffer.alloc(MiB, 1));
    expect(memory.lengthOf(zeroFrame)).toBeUndefined();
    memory.learn(zeroFrame, Buffer.alloc(MiB));
    memory.learn(dataFrame, Buffer.alloc(MiB, 1));
    expect(memory.lengthOf(zeroFrame)).toBe(MiB);
    expect(memory.lengthOf(dataFrame)).toBeUndefined();
    const changed = Buffer.from(zeroFrame);
    changed.writeUInt8(changed.readUInt8(changed.length - 1) ^ 1, changed.length - 1);
    expect(memory.lengthOf(changed)).toBeUndefined();
    const large = randomBytes(4096);
    memory.learn(large, Buffer.alloc(10));
    expect(memory.lengthOf(large)).toBeUndefined();
  });

  it('keeps learning once full: the least recently used frame makes room, so a later hole is still recognised', async () => {
    // Many small zero-filled files of different sizes (each its own frame) come before a sparse file's holes.
    const memory = new ZeroFrameMemory(1024, 8);
    const small = await Promise.all(Array.from({ length: 12 }, (_, index) => compressPart('zstd', Buffer.alloc(100 + index))));
    small.forEach((frame, index) => memory.learn(frame, Buffer.alloc(100 + index)));
    const hole = await compressPart('zstd', Buffer.alloc(MiB));
    expect(memory.lengthOf(hole)).toBeUndefined();
    memory.learn(hole, Buffer.alloc(MiB));
    expect(memory.lengthOf(hole)).toBe(MiB);
    // Capacity 8: the first frames were forgotten, the last ones (and the hole) are known.
    expect(memory.lengthOf(small[0] as Buffer)).toBeUndefined();
    expect(memory.lengthOf(small[11] as Buffer)).toBe(111);
    // A frame in use stays: the hole, asked for again and again, survives eight new frames learned after it.
    for (let index = 0; index < 8; index += 1) {
      memory.learn(await compressPart('zstd', Buffer.alloc(200 + index)), Buffer.alloc(200 + index));
      expect(memory.lengthOf(hole)).toBe(MiB);
    }
  });

  it('RecentMap keeps the most recently used entries up to its capacity', () => {
    const recent = new RecentMap<string, number>(2);
    recent.set('a', 1);
    recent.set('b', 2);
    expect(recent.get('a')).toBe(1);
    recent.set('c', 3);
    expect(recent.get('b')).toBeUndefined();
    expect(recent.get('a')).toBe(1);
    expect(recent.get('c')).toBe(3);
    expect(recent.size).toBe(2);
  });

  it('tells zeros from anything else and serves long runs in pieces', () => {
    expect(isAllZero(Buffer.alloc(3 * MiB + 1))).toBe(true);
    const almost = Buffer.alloc(3 * MiB);
    almost[3 * MiB - 1] = 1;
    expect(isAllZero(almost)).toBe(false);
    const pieces = [...zeroPieces(2 * MiB + 3)];
    expect(pieces.map((piece) => piece.length)).toEqual([MiB, MiB, 3]);
    expect(pieces.every((piece) => isAllZero(piece))).toBe(true);
    expect([...zeroPieces(0)]).toEqual([]);
  });
});
