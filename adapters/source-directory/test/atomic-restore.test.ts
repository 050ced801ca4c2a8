// Issue 41: a folder restore is built in a staging folder inside the target and moved into place only when all of it
// was read and verified. A failed restore (an input that breaks off or fails its checksum, a truncated tar, a seekable
// archive with a flipped byte or a tampered index) leaves the target byte for byte as it was (folderTreeHash covers
// content, modes, owners, mtimes and links, the target's own mtime too) and no staging behind. A successful restore
// into a folder that holds other things keeps them, as restores always did.
import { createReadStream } from 'node:fs';
import { chmod, lstat, mkdir, readFile, readlink, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditRestoreTarget, folderTreeHash } from '@holdfast/testkit';
import { createArchiveWriter, readIndex, resolveSnapshot, type ArchiveIndex, type ArchiveRangeReader } from '@holdfast/sdk';
import { craftTar, directorySource, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

const signal = () => new AbortController().signal;
let work: string;
let target: string;

beforeEach(async () => {
  work = await tempDir('atomic');
  target = join(work, 'target');
});
afterEach(() => removeAll(work));

/** A target that already holds things: files the backup also has (with other content), others it does not. */
async function populateTarget(): Promise<void> {
  await mkdir(join(target, '0-source', 'docs'), { recursive: true });
  await writeFile(join(target, '0-source', 'docs', 'a.txt'), 'old a');
  await writeFile(join(target, '0-source', 'not-in-backup.txt'), 'mine');
  await writeFile(join(target, 'unrelated.txt'), 'unrelated');
  await symlink('unrelated.txt', join(target, 'link'));
  await chmod(join(target, '0-source', 'docs'), 0o750);
  for (const path of ['0-source/docs/a.txt', '0-source/docs', '0-source', '']) await utimes(join(target, path), 1_600_000_000.123456, 1_600_000_000.123456);
}

async function sourceTree(): Promise<string> {
  const source = join(work, 'source');
  await mkdir(join(source, 'docs'), { recursive: true });
  await writeFile(join(source, 'docs', 'a.txt'), 'new a');
  await writeFile(join(source, 'docs', 'b.txt'), 'b');
  await writeFile(join(source, 'big.bin'), Buffer.alloc(1024 * 1024, 7));
  return source;
}

async function expectUnchanged(before: string, restore: () => Promise<unknown>): Promise<void> {
  await expect(restore()).rejects.toThrow();
  expect(await folderTreeHash(target)).toBe(before);
  expect((await auditRestoreTarget(target)).stagingLeftovers).toEqual([]);
}

/** The bytes of `archive`, cut after `length` bytes, then failing with `error` (what a checksum gate or a decrypter does). */
function breakingStream(archive: Buffer, length: number, error?: Error): Readable {
  return Readable.from(
    (async function* () {
      yield archive.subarray(0, length);
      if (error) throw error;
    })(),
  );
}

describe('atomic folder restores of plain tar backups', () => {
  it('leaves the target as it was when the input fails after part of a file, or when the tar is cut short', async () => {
    await populateTarget();
    const { archive } = await dumpToBuffer(directorySource({ paths: [await sourceTree()] }));
    const before = await folderTreeHash(target);
    const source = directorySource({ paths: ['/unused'] });
    const restoreFrom = (input: Readable) => () => source.restore(input, { target: { path: target }, signal: signal() });
    // The engine's checksum gate fails the stream only at its end, after every byte was handed on.
    await expectUnchanged(before, restoreFrom(breakingStream(archive, archive.length, new Error('checksum mismatch: the file\'s SHA-256 is ...'))));
    await expectUnchanged(before, restoreFrom(breakingStream(archive, 629_126, new Error('chunk 12 failed authentication'))));
    await expectUnchanged(before, restoreFrom(breakingStream(archive, 629_126)));
  });

  it('removes a target it created (and the folders above it) when the restore fails', async () => {
    const { archive } = await dumpToBuffer(directorySource({ paths: [await sourceTree()] }));
    const nested = join(work, 'new', 'deeper', 'target');
    await expect(directorySource({ paths: ['/unused'] }).restore(breakingStream(archive, 700_000), { target: { path: nested }, signal: signal() })).rejects.toThrow();
    await expect(lstat(join(work, 'new'))).rejects.toThrow(/ENOENT/);
  });

  it('merges a successful restore into a folder that holds other things: same-named entries replaced, the rest kept', async () => {
    await populateTarget();
    await mkdir(join(target, '0-source', 'big.bin'));
    const { archive } = await dumpToBuffer(directorySource({ paths: [await sourceTree()] }));
    const result = await directorySource({ paths: ['/unused'] }).restore(Readable.from([archive]), { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    expect(await readFile(join(target, '0-source', 'docs', 'a.txt'), 'utf8')).toBe('new a');
    expect(await readFile(join(target, '0-source', 'docs', 'b.txt'), 'utf8')).toBe('b');
    expect((await readFile(join(target, '0-source', 'big.bin'))).length).toBe(1024 * 1024);
    expect(await readFile(join(target, '0-source', 'not-in-backup.txt'), 'utf8')).toBe('mine');
    expect(await readFile(join(target, 'unrelated.txt'), 'utf8')).toBe('unrelated');
    expect(await readlink(join(target, 'link'))).toBe('unrelated.txt');
    // A folder the archive lists takes its archived mode, as an in-place restore gave it.
    expect((await lstat(join(target, '0-source', 'docs'))).mode & 0o777).toBe(0o755);
    expect((await auditRestoreTarget(target)).stagingLeftovers).toEqual([]);
  });

  it('leaves the original paths as they were when a restore to them fails', async () => {
    const data = await sourceTree();
    const source = directorySource({ paths: [data] });
    const { archive } = await dumpToBuffer(source);
    await writeFile(join(data, 'docs', 'a.txt'), 'changed since the backup');
    target = data;
    const before = await folderTreeHash(data);
    await expectUnchanged(before, () => source.restore(breakingStream(archive, 700_000, new Error('broken')), { target: { originalPaths: true }, signal: signal() }));
  });

  it('fails a tar whose member sits below a regular file of the same archive, leaving nothing', async () => {
    const crafted = await craftTar([{ name: 'plain', body: 'a file' }, { name: 'plain/inside.txt', body: 'x' }]);
    await expect(directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() })).rejects.toThrow();
    await expect(lstat(target)).rejects.toThrow(/ENOENT/);
  });
});

describe('atomic folder restores of seekable archives', () => {
  async function archiveOf(name: string): Promise<{ index: ArchiveIndex; bytes: Buffer }> {
    const writer = createArchiveWriter({ archiveName: name, compression: 'gzip' });
    const chunks: Buffer[] = [];
    writer.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writer.addDirectory({ path: '0-source' });
    await writer.addFile({ path: '0-source/a.bin', size: 300_000 }, Readable.from([Buffer.alloc(300_000, 1)]));
    await writer.addFile({ path: '0-source/b.bin', size: 300_000 }, Readable.from([Buffer.alloc(300_000, 2)]));
    const result = await writer.finish();
    return { index: await readIndex({ sidecar: Buffer.concat([...result.indexFile.chunks()]) }), bytes: Buffer.concat(chunks) };
  }

  const restoreWith = (index: ArchiveIndex, bytes: Buffer) => () => {
    const rangeReaderFor = (): ArchiveRangeReader => async (start, end) => Readable.from([bytes.subarray(start, end + 1)]);
    return directorySource({ paths: ['/unused'] }).restoreArchive!({ snapshot: resolveSnapshot([index]), rangeReaderFor }, { target: { path: target }, signal: signal() });
  };

  it('leaves the target as it was after a flipped data byte or a tampered index offset', async () => {
    await populateTarget();
    const before = await folderTreeHash(target);
    const { index, bytes } = await archiveOf('good.hfa');
    const b = index.entries.find((entry) => entry.path === '0-source/b.bin')!;
    const flipped = Buffer.from(bytes);
    const at = b.offset + b.length - 700;
    flipped[at] = flipped[at]! ^ 0x01;
    await expectUnchanged(before, restoreWith(index, flipped));
    const tampered = { ...index, entries: index.entries.map((entry) => (entry === b ? { ...entry, offset: entry.offset + 512 } : entry)) };
    await expectUnchanged(before, restoreWith(tampered, bytes));
    // The same archive, untouched, restores.
    await restoreWith(index, bytes)();
    expect((await readFile(join(target, '0-source', 'b.bin'))).equals(Buffer.alloc(300_000, 2))).toBe(true);
    expect(await readFile(join(target, '0-source', 'not-in-backup.txt'), 'utf8')).toBe('mine');
  });

  it('reads from a file like the engine hands it over', async () => {
    const { index, bytes } = await archiveOf('file.hfa');
    await writeFile(join(work, 'file.hfa'), bytes);
    const rangeReaderFor = (): ArchiveRangeReader => async (start, end) => createReadStream(join(work, 'file.hfa'), { start, end });
    const result = await directorySource({ paths: ['/unused'] }).restoreArchive!({ snapshot: resolveSnapshot([index]), rangeReaderFor }, { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    expect((await auditRestoreTarget(target)).stagingLeftovers).toEqual([]);
  });
});
