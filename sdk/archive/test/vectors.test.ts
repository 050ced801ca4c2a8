import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createArchiveWriter, extractAll, readIndex, type ArchiveResult } from '../src/index.js';
import { encodePaxRecord } from '../src/format/tar-header.js';
import { indexFileOf, makeTempDir } from './support/archive-files.js';
import { parseHexDump, renderHexDump } from './support/hex-dump.js';

const docPath = fileURLToPath(new URL('../../../docs/formats/archive.md', import.meta.url));

/** The tiny archive the format document shows byte for byte. */
export async function buildVectorArchive(): Promise<{ bytes: Buffer; result: ArchiveResult }> {
  const writer = createArchiveWriter({ archiveName: 'vector.hfa', createdAt: new Date('2026-01-01T00:00:00Z') });
  const chunks: Buffer[] = [];
  writer.on('data', (chunk: Buffer) => chunks.push(chunk));
  const content = Buffer.from('hello\n');
  await writer.addFile({ path: 'hello.txt', size: content.length, mode: 0o644, uid: 1000, gid: 1000, uname: 'alice', gname: 'alice', mtime: 1_700_000_000_000 }, Readable.from([content]));
  const result = await writer.finish();
  return { bytes: Buffer.concat(chunks), result };
}

function vectorBlock(doc: string, name: string): string {
  const match = new RegExp(`<!-- vector:${name} -->\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\``).exec(doc);
  if (!match?.[1]) throw new Error(`docs/formats/archive.md has no vector block "${name}"`);
  return match[1];
}

describe('test vectors in docs/formats/archive.md', () => {
  it('the writer produces the documented tiny archive byte for byte, and it reads back', async () => {
    const doc = await readFile(docPath, 'utf8');
    const { bytes, result } = await buildVectorArchive();
    const documented = parseHexDump(vectorBlock(doc, 'tiny-archive'));
    expect(renderHexDump(bytes)).toBe(renderHexDump(documented));
    expect(bytes.equals(documented)).toBe(true);
    const index = await readIndex({ rangeReader: async (start, end) => Readable.from([documented.subarray(start, end + 1)]), archiveSize: documented.length });
    expect(index).toEqual(result.index);
    const work = await makeTempDir('vector');
    try {
      const extracted = await extractAll(Readable.from([documented]), work.path);
      expect(extracted.files).toBe(1);
      expect(await readFile(`${work.path}/hello.txt`, 'utf8')).toBe('hello\n');
    } finally {
      await work.cleanup();
    }
  });

  it('the documented index file and pax records match the encoders', async () => {
    const doc = await readFile(docPath, 'utf8');
    const { result } = await buildVectorArchive();
    expect(vectorBlock(doc, 'tiny-index').trim()).toBe(indexFileOf(result).toString('utf8'));
    expect(vectorBlock(doc, 'pax-records')).toBe(
      encodePaxRecord('path', 'ünïcødé/日本語/ファイル名 😀.txt') + encodePaxRecord('size', '9663676416') + encodePaxRecord('mtime', '1700000000.123456789'),
    );
  });
});
