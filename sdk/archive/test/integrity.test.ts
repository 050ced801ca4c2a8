import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArchiveInputError,
  ArchiveIntegrityError,
  createArchiveWriter,
  extractAll,
  openMember,
  readIndex,
} from '../src/index.js';
import { countingFileRangeReader, indexFileOf, makeTempDir, writeArchiveFile } from './support/archive-files.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function smallArchive(options: Parameters<typeof createArchiveWriter>[0] = {}) {
  const work = await makeTempDir('integrity');
  cleanups.push(work.cleanup);
  const archive = join(work.path, 'a.hfa');
  const content = Buffer.from('the quick brown fox\n'.repeat(100));
  const result = await writeArchiveFile(createArchiveWriter(options), archive, async (writer) => {
    await writer.addFile({ path: 'fox.txt', size: content.length, mtime: 1_700_000_000_000 }, Readable.from([content]));
  });
  return { work, archive, content, result };
}

// AES-256-GCM as a stand-in for the caller's sealing (the engine's encryption comes later): authenticated, so a
// changed byte fails to unseal.
function gcmSealer() {
  const key = randomBytes(32);
  return {
    sealIndex: (plain: Buffer) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    unsealIndex: (sealed: Buffer) => {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
    },
  };
}

describe('index integrity', () => {
  it('rejects a sidecar whose JSON was changed (checksum in the index)', async () => {
    const { result } = await smallArchive();
    const text = indexFileOf(result).toString('utf8');
    const tampered = Buffer.from(text.replace(`"size":${2000}`, `"size":${2001}`), 'utf8');
    expect(tampered.equals(indexFileOf(result))).toBe(false);
    await expect(readIndex({ sidecar: tampered })).rejects.toThrow(ArchiveIntegrityError);
    await expect(readIndex({ sidecar: indexFileOf(result) })).resolves.toEqual(result.index);
    await expect(readIndex({ sidecar: Readable.from(result.indexFile.chunks()) })).resolves.toEqual(result.index);
  });

  it('rejects an archive whose stored index was changed, through the trailer checksum', async () => {
    const { archive, result } = await smallArchive();
    const bytes = await readFile(archive);
    const position = bytes.indexOf(Buffer.from('"fox.txt"'));
    expect(position).toBeGreaterThan(0);
    bytes[position + 1] = 'F'.charCodeAt(0);
    await writeFile(archive, bytes);
    const { rangeReader } = countingFileRangeReader(archive);
    await expect(readIndex({ rangeReader, archiveSize: result.archiveSize })).rejects.toThrow(/stored index checksum mismatch/);
  });

  it('detects a changed byte of member content on a range read and on extraction', async () => {
    const { archive, result, work } = await smallArchive();
    const entry = result.index.entries[0];
    if (!entry) throw new Error('no entry');
    const bytes = await readFile(archive);
    const dataStart = entry.offset + entry.length - 2048; // the 2000-byte content padded to 2048 ends the member
    bytes[dataStart + 10] = 0x21;
    await writeFile(archive, bytes);
    const { rangeReader } = countingFileRangeReader(archive);
    const read = async () => {
      for await (const chunk of openMember(rangeReader, entry)) void chunk;
    };
    await expect(read()).rejects.toThrow(ArchiveIntegrityError);
    await expect(extractAll(createReadStream(archive), join(work.path, 'out'))).rejects.toThrow(ArchiveIntegrityError);
  });

  it('seals the index with the caller hook: unreadable without the unseal hook, verified with it', async () => {
    const sealer = gcmSealer();
    const { archive, result, content, work } = await smallArchive({ sealIndex: sealer.sealIndex });
    expect(indexFileOf(result).includes(Buffer.from('fox.txt'))).toBe(false);
    expect((await readFile(archive)).includes(Buffer.from('"fox.txt"'))).toBe(false);
    const { rangeReader } = countingFileRangeReader(archive);
    await expect(readIndex({ rangeReader, archiveSize: result.archiveSize })).rejects.toThrow(ArchiveInputError);
    const index = await readIndex({ rangeReader, archiveSize: result.archiveSize }, { unsealIndex: sealer.unsealIndex });
    expect(index).toEqual(result.index);
    expect(await readIndex({ sidecar: indexFileOf(result) }, { unsealIndex: sealer.unsealIndex })).toEqual(result.index);
    const tampered = indexFileOf(result);
    tampered.writeUInt8((tampered.at(-1) ?? 0) ^ 1, tampered.length - 1);
    await expect(readIndex({ sidecar: tampered }, { unsealIndex: sealer.unsealIndex })).rejects.toThrow();
    const extracted = await extractAll(createReadStream(archive), join(work.path, 'out'), { unsealIndex: sealer.unsealIndex });
    expect(extracted.index).toEqual(result.index);
    expect(await readFile(join(work.path, 'out', 'fox.txt'))).toEqual(content);
    expect((await readdir(join(work.path, 'out'))).sort()).toEqual(['fox.txt']); // format members (manifest, index, trailer) are not extracted
  });
});
