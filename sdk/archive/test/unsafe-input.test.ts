import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchiveInputError, ArchiveUnsafePathError, createArchiveWriter, extractAll, readIndex, ArchiveFormatError } from '../src/index.js';
import { encodeTarHeader, paddingFor, type TarHeader } from '../src/format/tar-header.js';
import { makeTempDir } from './support/archive-files.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// Hand-built hostile tar streams: what another tool (or an attacker) could put in front of the extractor.
function tarOf(members: { header: Partial<TarHeader>; data?: Buffer }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { header, data = Buffer.alloc(0) } of members) {
    const full: TarHeader = { name: 'x', mode: 0o644, uid: 0, gid: 0, size: data.length, mtime: '1700000000', typeFlag: '0', linkName: '', uname: '', gname: '', pax: {}, ...header };
    blocks.push(encodeTarHeader(full), data, Buffer.alloc(paddingFor(data.length)));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

async function workDir() {
  const work = await makeTempDir('unsafe');
  cleanups.push(work.cleanup);
  const target = join(work.path, 'target');
  await mkdir(target);
  return { work, target };
}

describe('hostile archives and bad input', () => {
  it('refuses a member path with ".." and writes nothing outside the target', async () => {
    const { work, target } = await workDir();
    const archive = tarOf([{ header: { name: '../escaped.txt' }, data: Buffer.from('x') }]);
    await expect(extractAll(Readable.from([archive]), target)).rejects.toThrow(ArchiveUnsafePathError);
    expect((await readdir(work.path)).sort()).toEqual(['target']);
  });

  it('refuses an absolute member path', async () => {
    const { target } = await workDir();
    const archive = tarOf([{ header: { name: '/tmp/absolute.txt' }, data: Buffer.from('x') }]);
    await expect(extractAll(Readable.from([archive]), target)).rejects.toThrow(/absolute member path/);
  });

  it('never writes through a symlink planted by the archive: both are refused by name (issue 41)', async () => {
    const { work, target } = await workDir();
    const outside = join(work.path, 'outside');
    await mkdir(outside);
    const archive = tarOf([
      { header: { name: 'link', typeFlag: '2', linkName: outside, size: 0 } },
      { header: { name: 'link/evil.txt' }, data: Buffer.from('owned') },
      { header: { name: 'fine.txt' }, data: Buffer.from('fine') },
    ]);
    const result = await extractAll(Readable.from([archive]), target);
    expect(result.warnings).toEqual([
      'link/evil.txt: refused, it lies below "link", a symlink of this archive',
      `link: symlink refused, its target "${outside}" is absolute, outside the restore target`,
    ]);
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(target)).toEqual(['fine.txt']);
  });

  it('refuses device nodes and FIFOs by name instead of writing them as files', async () => {
    const { target } = await workDir();
    const archive = tarOf([
      { header: { name: 'null', typeFlag: '3', size: 0 } },
      { header: { name: 'disk', typeFlag: '4', size: 0 } },
      { header: { name: 'pipe', typeFlag: '6', size: 0 } },
    ]);
    const result = await extractAll(Readable.from([archive]), target);
    expect(result.warnings).toEqual(['null: refused, device nodes are not restored', 'disk: refused, device nodes are not restored', 'pipe: refused, FIFOs are not restored']);
    expect(await readdir(target)).toEqual([]);
  });

  it('rejects a corrupted header checksum with a format error naming the offset', async () => {
    const { target } = await workDir();
    const archive = tarOf([{ header: { name: 'a.txt' }, data: Buffer.from('a') }]);
    archive[10] = 0x41;
    await expect(extractAll(Readable.from([archive]), target)).rejects.toThrow(/checksum mismatch at byte 0/);
  });

  it('rejects bad writer input with clear errors', async () => {
    const writer = createArchiveWriter();
    writer.resume();
    await expect(writer.addDirectory({ path: '../up' })).rejects.toThrow(ArchiveUnsafePathError);
    const second = createArchiveWriter();
    second.resume();
    await expect(second.addDirectory({ path: '.holdfast/mine' })).rejects.toThrow(ArchiveInputError);
    const third = createArchiveWriter();
    third.resume();
    await third.addFile({ path: 'a', size: 1 }, Readable.from([Buffer.from('a')]));
    await expect(third.addHardLink({ path: 'b' }, 'missing')).rejects.toThrow(/must point at a file added earlier/);
    expect(() => createArchiveWriter({ chunkSize: 10 })).toThrow(ArchiveInputError);
    expect(() => createArchiveWriter({ compression: 'lzma' as never })).toThrow(/must be none, gzip or zstd, got "lzma"/);
    expect(() => createArchiveWriter({ chain: { id: 'c', sequence: 2, baseArchives: ['only-one'] } })).toThrow(/needs exactly 2 base archives/);
    const fourth = createArchiveWriter();
    fourth.resume();
    await expect(fourth.addReference({ path: 'a', kind: 'file', mode: 0o644, uid: 0, gid: 0, mtime: '1', offset: 0, length: 512 }, 'elsewhere')).rejects.toThrow(
      /not a base archive of this chain/,
    );
  });

  it('pads a file that shrank while it was read, keeps the archive valid and flags the entry', async () => {
    const { target } = await workDir();
    const writer = createArchiveWriter();
    const chunks: Buffer[] = [];
    writer.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writer.addFile({ path: 'shrunk.log', size: 10 }, Readable.from([Buffer.from('abc')]));
    await writer.addFile({ path: 'grown.log', size: 2 }, Readable.from([Buffer.from('abcdef')]));
    const { index } = await writer.finish();
    expect(index.entries.map((entry) => [entry.path, entry.size, entry.isSizeChanged])).toEqual([
      ['shrunk.log', 10, true],
      ['grown.log', 2, true],
    ]);
    const result = await extractAll(Readable.from([Buffer.concat(chunks)]), target);
    expect(result.files).toBe(2);
  });

  it('rejects a sidecar that is not an index and an archive tail that is not a trailer', async () => {
    await expect(readIndex({ sidecar: Buffer.from('{"format":"x"}') })).rejects.toThrow(ArchiveFormatError);
    const notArchive = Buffer.alloc(4096, 1);
    await expect(readIndex({ rangeReader: async (start, end) => Readable.from([notArchive.subarray(start, end + 1)]), archiveSize: notArchive.length })).rejects.toThrow(
      /does not end with the trailer/,
    );
  });
});
