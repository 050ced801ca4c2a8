import { createReadStream } from 'node:fs';
import { link, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { readIndex, resolveSnapshot, type ArchiveRangeReader, type DumpStats } from '@holdfast/sdk';
import { directorySource, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

let work: string;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  work = await tempDir('archive-restore');
});
afterEach(() => removeAll(work));

describe('source-directory seekable archive restore', () => {
  it('puts a folder root and a single-file root back at their original paths, a hard link across roots as a copy', async () => {
    const data = join(work, 'srv', 'data');
    const single = join(work, 'etc', 'app.conf');
    await mkdir(join(data, 'nested'), { recursive: true });
    await mkdir(join(work, 'etc'), { recursive: true });
    await writeFile(join(data, 'nested', 'a.txt'), 'alpha');
    await writeFile(join(data, 'b.txt'), 'bravo');
    await link(join(data, 'b.txt'), join(data, 'nested', 'b-link.txt'));
    await writeFile(single, 'config=1');
    // The single-file root is walked after the folder that holds its other name, so the archive stores it as a hard
    // link to `0-data/shared.conf`, a member of another root.
    await link(single, join(data, 'shared.conf'));
    const source = directorySource({ paths: [data, single] });
    const { archive, stats } = await dumpToBuffer(source, {
      archive: { archiveName: 'run-0.hfa', createdAt: new Date(), compression: 'zstd', chain: null },
    });
    const archivePath = join(work, 'run-0.hfa');
    await writeFile(archivePath, archive);
    const snapshot = resolveSnapshot([await readIndex({ sidecar: sidecarOf(stats) })]);
    expect(snapshot.entries.find((entry) => entry.path === '1-app.conf')).toMatchObject({ kind: 'hardlink', target: '0-data/shared.conf' });
    await rm(join(work, 'srv'), { recursive: true });
    await rm(single);

    const rangeReaderFor = (name: string): ArchiveRangeReader => {
      expect(name).toBe('run-0.hfa');
      return async (start, end) => createReadStream(archivePath, { start, end });
    };
    const result = await source.restoreArchive?.({ snapshot, rangeReaderFor }, { target: { originalPaths: true }, signal: signal() });

    expect(result?.warnings).toEqual([]);
    expect(await readFile(join(data, 'nested', 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readFile(join(data, 'b.txt'), 'utf8')).toBe('bravo');
    expect((await lstat(join(data, 'nested', 'b-link.txt'))).ino).toBe((await lstat(join(data, 'b.txt'))).ino);
    expect(await readFile(single, 'utf8')).toBe('config=1');
    expect((await lstat(single)).ino).not.toBe((await lstat(join(data, 'shared.conf'))).ino);
    // Nothing of the archive's own layout (`0-data/`, `1-app.conf`) lands next to the original paths.
    expect((await lstat(join(work, 'srv', '0-data')).catch(() => undefined))).toBeUndefined();
  });

  it('restores one included file of a folder root to its original path and nothing else', async () => {
    const data = join(work, 'data');
    await mkdir(join(data, 'keep'), { recursive: true });
    await writeFile(join(data, 'keep', 'one.txt'), 'one');
    await writeFile(join(data, 'other.txt'), 'other');
    const source = directorySource({ paths: [data] });
    const { archive, stats } = await dumpToBuffer(source, {
      archive: { archiveName: 'run-0.hfa', createdAt: new Date(), compression: 'none', chain: null },
    });
    const archivePath = join(work, 'run-0.hfa');
    await writeFile(archivePath, archive);
    const snapshot = resolveSnapshot([await readIndex({ sidecar: sidecarOf(stats) })]);
    await rm(data, { recursive: true });
    await source.restoreArchive?.(
      { snapshot, rangeReaderFor: () => async (start, end) => createReadStream(archivePath, { start, end }), include: ['0-data/keep/one.txt'] },
      { target: { originalPaths: true }, signal: signal() },
    );
    expect(await readFile(join(data, 'keep', 'one.txt'), 'utf8')).toBe('one');
    expect(await lstat(join(data, 'other.txt')).catch(() => undefined)).toBeUndefined();
  });
});

/** The index sidecar's bytes as the engine reads them: produced in pieces, never handed over as one buffer. */
function sidecarOf(stats: DumpStats): Readable {
  const indexFile = stats.archive?.indexFile;
  if (!indexFile || Buffer.isBuffer(indexFile)) throw new Error('the dump should hand over its index file in pieces');
  return Readable.from(indexFile.chunks());
}
