import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { addDirectoryTree, createArchiveWriter, resolveSnapshot, restoreSnapshot, type RangeReader } from '../src/index.js';
import { COALESCE_GAP_BYTES, CoalescedReads, type PlannedRead } from '../src/reader/coalesced-reads.js';
import { countingFileRangeReader, makeTempDir, writeArchiveFile } from './support/archive-files.js';
import { describeTree } from './support/tree-compare.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function archiveOf(files: Record<string, Buffer | string>) {
  const work = await makeTempDir('coalesced');
  cleanups.push(work.cleanup);
  const source = join(work.path, 'source');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(source, path, '..'), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const file = join(work.path, 'full.hfa');
  const result = await writeArchiveFile(createArchiveWriter({ archiveName: 'full.hfa', compression: 'zstd' }), file, (writer) =>
    addDirectoryTree(writer, source).then(() => undefined),
  );
  return { work, source, file, snapshot: resolveSnapshot([result.index]) };
}

/** Planned reads of members of archive "a", each given as [offset, length]. */
const membersOfA = (...members: [number, number][]): PlannedRead[] => members.map(([offset, length]) => ({ archive: 'a', offset, length }));

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('coalesced range reads of a restore', () => {
  it('restores 300 small files with ONE range read of the archive, tree identical', async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 300; index += 1) files[`dir-${index % 7}/file-${index}.txt`] = `content of file ${index}\n`.repeat(index % 13);
    const { work, source, file, snapshot } = await archiveOf(files);
    const counter = countingFileRangeReader(file);
    const restored = join(work.path, 'restored');
    await restoreSnapshot(snapshot, () => counter.rangeReader, restored);
    expect(await describeTree(restored)).toEqual(await describeTree(source));
    // One request per file before: every file its own read buffer, decryption record and request.
    expect(counter.requests).toHaveLength(1);
  });

  it('starts a new read where unselected members leave a gap wider than the limit, and reads no byte past the last selected file', async () => {
    const { work, file, snapshot } = await archiveOf({
      'a/one.txt': 'one\n',
      'a/two.txt': 'two\n',
      // Random bytes do not compress: a gap of about twice the limit between a/ and z/.
      'm/big.bin': randomBytes(2 * COALESCE_GAP_BYTES),
      'z/three.txt': 'three\n',
      'z/zz-after.bin': randomBytes(64 * 1024),
    });
    const counter = countingFileRangeReader(file);
    const restored = join(work.path, 'restored');
    const selected = new Set(['a/one.txt', 'a/two.txt', 'z/three.txt']);
    await restoreSnapshot(snapshot, () => counter.rangeReader, restored, { include: (path) => selected.has(path) || !path.includes('.') });
    expect(counter.requests).toHaveLength(2);
    const three = snapshot.entries.find((entry) => entry.path === 'z/three.txt');
    expect(counter.requests[1]?.[1]).toBe((three?.offset ?? 0) + (three?.length ?? 0) - 1);
    expect(counter.served()).toBeLessThan(16 * 1024);
  });

  it('serves members in order from one read, drops gaps, and gives an out-of-order member a read of its own', async () => {
    const archive = Buffer.from('0123456789abcdefghij');
    const requests: [number, number][] = [];
    const rangeReader: RangeReader = async (start, end) => {
      requests.push([start, end]);
      // Tiny chunks: members and gaps straddle chunk boundaries.
      const bytes = archive.subarray(start, end + 1);
      return Readable.from([0, 3, 6, 9, 12, 15, 18].filter((at) => at < bytes.length).map((at) => bytes.subarray(at, at + 3)));
    };
    const plans = membersOfA([2, 3], [7, 4], [11, 1], [0, 2]);
    const reads = new CoalescedReads(() => rangeReader, (index) => plans[index], plans.length);
    const texts: string[] = [];
    for (const [index, plan] of plans.entries()) {
      texts.push((await readAll(await reads.readerFor(index)(plan.offset, plan.offset + plan.length - 1))).toString());
    }
    reads.close();
    expect(texts).toEqual(['234', '789a', 'b', '01']);
    expect(requests).toEqual([
      [2, 11],
      [0, 1],
    ]);
  });

  it('a member whose reader stopped early does not disturb the next one; a failed read is not reused', async () => {
    const archive = Buffer.from('abcdefghijklmnopqrstuvwxyz');
    let failNext = false;
    const requests: [number, number][] = [];
    const rangeReader: RangeReader = async (start, end) => {
      requests.push([start, end]);
      const bytes = archive.subarray(start, end + 1);
      const chunks = [bytes.subarray(0, 4), bytes.subarray(4, 8), bytes.subarray(8)];
      const shouldFail = failNext;
      failNext = false;
      return Readable.from(
        (async function* () {
          for (const chunk of chunks) {
            if (shouldFail) throw new Error('connection reset');
            yield chunk;
          }
        })(),
      );
    };
    const plans = membersOfA([0, 6], [6, 4], [10, 3], [13, 3]);
    const reads = new CoalescedReads(() => rangeReader, (index) => plans[index], plans.length);
    const first = await reads.readerFor(0)(0, 5);
    const iterator = first[Symbol.asyncIterator]();
    expect(Buffer.from((await iterator.next()).value as Buffer).toString()).toBe('abcd');
    await iterator.return?.();
    expect((await readAll(await reads.readerFor(1)(6, 9))).toString()).toBe('ghij');
    expect(requests).toHaveLength(1);
    // The shared read fails mid-member: that member fails, and the next one is read on its own.
    reads.close();
    failNext = true;
    await expect(readAll(await reads.readerFor(2)(10, 12))).rejects.toThrow(/connection reset/);
    expect((await readAll(await reads.readerFor(3)(13, 15))).toString()).toBe('nop');
    expect(requests).toEqual([
      [0, 15],
      [10, 15],
      [13, 15],
    ]);
    reads.close();
  });
});
