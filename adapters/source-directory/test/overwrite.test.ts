// Issue 47: the engine refuses (409) a folder restore into a non-empty folder unless the request says
// `overwrite: true`, but files that appeared after that check were replaced silently. `RestoreOptions.overwrite:
// false` now makes the restore itself refuse, when it moves its staged tree into place, to replace anything that
// exists there: the target is left byte for byte as it was and no staging stays behind.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditRestoreTarget, folderTreeHash } from '@holdfast/testkit';
import { createArchiveWriter, readIndex, resolveSnapshot, type ArchiveRangeReader } from '@holdfast/sdk';
import { directorySource, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

const signal = () => new AbortController().signal;
const refusal = /exists now and the restore would replace it, which the restore request did not allow: nothing was changed\. Send "overwrite": true/;
let work: string;
let target: string;

beforeEach(async () => {
  work = await tempDir('overwrite');
  target = join(work, 'target');
});
afterEach(() => removeAll(work));

async function backup(): Promise<Buffer> {
  const source = join(work, 'source');
  await mkdir(join(source, 'docs'), { recursive: true });
  await writeFile(join(source, 'docs', 'a.txt'), 'new a');
  await writeFile(join(source, 'big.bin'), Buffer.alloc(256 * 1024, 7));
  return (await dumpToBuffer(directorySource({ paths: [source] }))).archive;
}

/** Staging folders of this restore, beside the target or inside it. */
async function stagingFolders(): Promise<string[]> {
  const beside = (await readdir(work)).filter((name) => name.includes('holdfast-restore-'));
  const inside = (await readdir(target).catch(() => [] as string[])).filter((name) => name.includes('holdfast-restore-'));
  return [...beside, ...inside];
}

const restore = (input: Readable, overwrite?: boolean) =>
  directorySource({ paths: ['/unused'] }).restore(input, { target: { path: target }, signal: signal(), ...(overwrite === undefined ? {} : { overwrite }) });

describe('RestoreOptions.overwrite of folder restores', () => {
  it('overwrite: false refuses a target holding a file the backup has, leaving the target as it was and no staging', async () => {
    const archive = await backup();
    await mkdir(join(target, '0-source', 'docs'), { recursive: true });
    await writeFile(join(target, '0-source', 'docs', 'a.txt'), 'old a');
    await writeFile(join(target, 'mine.txt'), 'mine');
    const before = await folderTreeHash(target);
    await expect(restore(Readable.from([archive]), false)).rejects.toThrow(refusal);
    expect(await folderTreeHash(target)).toBe(before);
    expect((await auditRestoreTarget(target)).stagingLeftovers).toEqual([]);
    expect(await stagingFolders()).toEqual([]);
  });

  it('files that appear in the target while the restore runs are not replaced: refused when the tree would move in', async () => {
    const archive = await backup();
    await mkdir(target);
    const input = new PassThrough();
    input.write(archive.subarray(0, archive.length - 1024));
    const restoring = restore(input, false);
    restoring.catch(() => undefined);
    for (let tries = 0; (await stagingFolders()).length === 0; tries++) {
      if (tries > 100) throw new Error('the restore never staged');
      await sleep(20);
    }
    await mkdir(join(target, '0-source', 'docs'), { recursive: true });
    await writeFile(join(target, '0-source', 'docs', 'a.txt'), 'made meanwhile');
    const before = await folderTreeHash(target);
    input.end(archive.subarray(archive.length - 1024));
    await expect(restoring).rejects.toThrow(refusal);
    expect(await folderTreeHash(target)).toBe(before);
    expect(await readFile(join(target, '0-source', 'docs', 'a.txt'), 'utf8')).toBe('made meanwhile');
    expect(await stagingFolders()).toEqual([]);
  });

  it('a target folder that did not exist and appears, not empty, while the restore runs is refused too', async () => {
    const archive = await backup();
    const input = new PassThrough();
    input.write(archive.subarray(0, archive.length - 1024));
    const restoring = restore(input, false);
    restoring.catch(() => undefined);
    for (let tries = 0; (await stagingFolders()).length === 0; tries++) {
      if (tries > 100) throw new Error('the restore never staged');
      await sleep(20);
    }
    await mkdir(target);
    await writeFile(join(target, 'made-meanwhile.txt'), 'x');
    input.end(archive.subarray(archive.length - 1024));
    await expect(restoring).rejects.toThrow(refusal);
    expect(await readdir(target)).toEqual(['made-meanwhile.txt']);
    expect(await stagingFolders()).toEqual([]);
  });

  it('overwrite: false still restores into a folder whose other files the backup does not have (nothing is replaced)', async () => {
    const archive = await backup();
    await mkdir(target);
    await writeFile(join(target, 'mine.txt'), 'mine');
    await restore(Readable.from([archive]), false);
    expect(await readFile(join(target, '0-source', 'docs', 'a.txt'), 'utf8')).toBe('new a');
    expect(await readFile(join(target, 'mine.txt'), 'utf8')).toBe('mine');
  });

  it('overwrite: true (and, as before, no overwrite at all) replaces files of the same name', async () => {
    const archive = await backup();
    for (const overwrite of [true, undefined]) {
      await mkdir(join(target, '0-source', 'docs'), { recursive: true });
      await writeFile(join(target, '0-source', 'docs', 'a.txt'), 'old a');
      await restore(Readable.from([archive]), overwrite);
      expect(await readFile(join(target, '0-source', 'docs', 'a.txt'), 'utf8')).toBe('new a');
      expect(await stagingFolders()).toEqual([]);
      await removeAll(target);
    }
  });

  it('seekable archives: overwrite: false refuses a file in the way and leaves the target as it was', async () => {
    const writer = createArchiveWriter({ archiveName: 'ow.hfa', compression: 'gzip' });
    const chunks: Buffer[] = [];
    writer.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writer.addDirectory({ path: '0-source' });
    await writer.addFile({ path: '0-source/a.bin', size: 1000 }, Readable.from([Buffer.alloc(1000, 1)]));
    const result = await writer.finish();
    const index = await readIndex({ sidecar: Buffer.concat([...result.indexFile.chunks()]) });
    const bytes = Buffer.concat(chunks);
    const rangeReaderFor = (): ArchiveRangeReader => async (start, end) => Readable.from([bytes.subarray(start, end + 1)]);
    await mkdir(join(target, '0-source'), { recursive: true });
    await writeFile(join(target, '0-source', 'a.bin'), 'old');
    const before = await folderTreeHash(target);
    const source = directorySource({ paths: ['/unused'] });
    const options = (overwrite: boolean) => ({ target: { path: target }, signal: signal(), overwrite });
    await expect(source.restoreArchive!({ snapshot: resolveSnapshot([index]), rangeReaderFor }, options(false))).rejects.toThrow(refusal);
    expect(await folderTreeHash(target)).toBe(before);
    expect(await stagingFolders()).toEqual([]);
    await source.restoreArchive!({ snapshot: resolveSnapshot([index]), rangeReaderFor }, options(true));
    expect((await readFile(join(target, '0-source', 'a.bin'))).length).toBe(1000);
  });
});
