import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createArchiveWriter, extractAll, readIndex } from '../src/index.js';
import { countingFileRangeReader, makeTempDir } from './support/archive-files.js';
import { sparseFileSink } from './support/sparse-file-sink.js';

const run = promisify(execFile);
const tarEnv = { ...process.env, TZ: 'UTC' };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// Just over the 8 GiB ustar size limit (an odd size, so padding is exercised too), written only in a few places.
const SIZE = 8 * 1024 ** 3 + 1024 ** 2 + 123;
const REGIONS: [number, Buffer][] = [
  [0, Buffer.from('head of the sparse file\n')],
  [4 * 1024 ** 3 + 4097, randomBytes(256 * 1024)],
  [SIZE - 17, Buffer.from('tail of the file\n')],
];

async function readAt(file: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, position);
    return buffer;
  } finally {
    await handle.close();
  }
}

describe('files over 8 GiB', () => {
  it('stores a sparse file over 8 GiB as one pax entry that GNU tar lists and the extractor restores sparsely', { timeout: 900_000 }, async () => {
    const work = await makeTempDir('large');
    cleanups.push(work.cleanup);
    const source = join(work.path, 'sparse.img');
    const handle = await open(source, 'w');
    await handle.truncate(SIZE);
    for (const [position, bytes] of REGIONS) await handle.write(bytes, 0, bytes.length, position);
    await handle.close();

    const archive = join(work.path, 'large.tar');
    const writer = createArchiveWriter({ archiveName: 'large.tar' });
    const written = pipeline(writer, sparseFileSink(archive));
    await writer.addFile({ path: 'images/sparse.img', size: SIZE, mode: 0o640, mtime: 1_650_000_000_500 }, createReadStream(source, { highWaterMark: 4 * 1024 * 1024 }));
    const result = await writer.finish();
    await written;

    const listing = await run('tar', ['-tvf', archive], { env: tarEnv });
    expect(listing.stdout).toMatch(new RegExp(`^-rw-r----- 0/0 +${SIZE} 2022-04-15 \\d\\d:\\d\\d images/sparse\\.img$`, 'm'));

    const { rangeReader } = countingFileRangeReader(archive);
    const index = await readIndex({ rangeReader, archiveSize: (await stat(archive)).size });
    expect(index.entries[0]).toMatchObject({ path: 'images/sparse.img', size: SIZE, compression: 'none' });
    expect(index).toEqual(result.index);

    const restoredDir = join(work.path, 'restored');
    const extracted = await extractAll(createReadStream(archive, { highWaterMark: 4 * 1024 * 1024 }), restoredDir);
    expect(extracted.sha256.get('images/sparse.img')).toBe(index.entries[0]?.sha256);
    const restored = join(restoredDir, 'images', 'sparse.img');
    const restoredStats = await stat(restored);
    expect(restoredStats.size).toBe(SIZE);
    expect(restoredStats.mode & 0o777).toBe(0o640);
    expect(restoredStats.mtimeMs).toBe(1_650_000_000_500);
    // Holes stay holes: only the written regions take disk space.
    expect(restoredStats.blocks * 512).toBeLessThan(16 * 1024 * 1024);
    for (const [position, bytes] of REGIONS) expect((await readAt(restored, position, bytes.length)).equals(bytes)).toBe(true);
    expect((await readAt(restored, 2 * 1024 ** 3, 4096)).equals(Buffer.alloc(4096))).toBe(true);
  });
});
