import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createArchiveWriter, findDatabaseDump, selectDownloadDump, openMember, readIndex, ArchiveInputError, type Compression } from '../src/index.js';
import { countingFileRangeReader, makeTempDir, writeArchiveFile } from './support/archive-files.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('range reads', () => {
  for (const compression of ['none', 'gzip', 'zstd'] as Compression[]) {
    it(`reads one ${compression} member with a single request for exactly its bytes`, async () => {
      const work = await makeTempDir(`range-${compression}`);
      cleanups.push(work.cleanup);
      const contents = [randomBytes(3 * 1024 * 1024), randomBytes(1024 * 1024 + 17), randomBytes(2 * 1024 * 1024)];
      const archive = join(work.path, 'a.hfa');
      const result = await writeArchiveFile(createArchiveWriter({ compression }), archive, async (writer) => {
        for (const [position, content] of contents.entries()) {
          await writer.addFile({ path: `data/file-${position}.bin`, size: content.length }, Readable.from([content]));
        }
      });
      const archiveBytes = (await readFile(archive)).length;
      expect(result.archiveSize).toBe(archiveBytes);

      const counter = countingFileRangeReader(archive);
      const index = await readIndex({ rangeReader: counter.rangeReader, archiveSize: archiveBytes });
      const servedForIndex = counter.served();
      expect(servedForIndex).toBeLessThan(16 * 1024);
      const entry = index.entries.find((candidate) => candidate.path === 'data/file-1.bin');
      if (!entry) throw new Error('entry missing from the index');
      const content = await collect(openMember(counter.rangeReader, entry));
      expect(Buffer.compare(content, contents[1] as Buffer)).toBe(0);
      expect(counter.requests.at(-1)).toEqual([entry.offset, entry.offset + entry.length - 1]);
      expect(counter.served() - servedForIndex).toBe(entry.length);
      expect(entry.length).toBeLessThan((contents[1] as Buffer).length + 64 * 1024);
    });
  }

  it('finds one database dump by name and names the databases when the name is wrong', async () => {
    const work = await makeTempDir('range-db');
    cleanups.push(work.cleanup);
    const archive = join(work.path, 'dbs.hfa');
    const dumps = { billing: Buffer.from('billing dump\n'.repeat(5000)), 'crm/eu': Buffer.from('crm dump\n'.repeat(3000)) };
    const result = await writeArchiveFile(createArchiveWriter({ compression: 'zstd' }), archive, async (writer) => {
      await writer.addFile({ path: 'notes.txt', size: 3 }, Readable.from([Buffer.from('hi\n')]));
      for (const [name, dump] of Object.entries(dumps)) await writer.addDatabaseDump(name, Readable.from([dump]));
    });
    const { rangeReader } = countingFileRangeReader(archive);
    const dump = await collect(openMember(rangeReader, findDatabaseDump(result.index, 'crm/eu')));
    expect(dump.equals(dumps['crm/eu'])).toBe(true);
    expect(() => findDatabaseDump(result.index, 'missing')).toThrow(ArchiveInputError);
    expect(() => findDatabaseDump(result.index, 'missing')).toThrow(/"billing", "crm\/eu"/);
    expect(selectDownloadDump(result.index, 'billing').database).toBe('billing');
    expect(() => selectDownloadDump(result.index)).toThrow(/holds files and the databases "billing", "crm\/eu"; name one in "database"/);
    const onlyDump = { entries: result.index.entries.filter((entry) => entry.database === 'billing') };
    expect(selectDownloadDump(onlyDump).database).toBe('billing');
  });
});
