import { ArchiveFormatError } from '../errors.js';
import { BLOCK_SIZE, decodePaxRecords, decodeUstarBlock, isZeroBlock, paddingFor, TYPE_FLAG, type TarHeader } from '../format/tar-header.js';
import type { ByteReader } from './byte-reader.js';

/** One tar entry as read from the stream; `body()` yields its data and may be skipped. */
export interface RawTarEntry {
  header: TarHeader;
  /** Offset of the entry's first header block (its pax header, when it has one). */
  offset: number;
  dataSize: number;
  body(): AsyncGenerator<Buffer>;
}

// An extended header is a few records; a huge one is a broken or hostile archive, not something to buffer.
const MAX_PAX_HEADER = 1024 * 1024;
const TYPES_WITHOUT_DATA = new Set(['1', '2', '3', '4', '5', '6']);

/** Reads tar entries until the end-of-archive block or a clean end of stream (a range read ends after its member). */
export async function* readTarEntries(reader: ByteReader): AsyncGenerator<RawTarEntry> {
  for (;;) {
    const offset = reader.position;
    let block = await reader.readExact(BLOCK_SIZE);
    let pax: Record<string, string> = {};
    while (block && !isZeroBlock(block) && (block[156] === 0x78 || block[156] === 0x67)) {
      const extended = decodeUstarBlock(block, {}, reader.position - BLOCK_SIZE);
      if (extended.size > MAX_PAX_HEADER) throw new ArchiveFormatError(`pax header of ${extended.size} bytes at byte ${offset} is too large`);
      const data = extended.size > 0 ? await reader.readExact(extended.size) : Buffer.alloc(0);
      if (!data) throw new ArchiveFormatError(`unexpected end of archive in the pax header at byte ${offset}`);
      await reader.skip(paddingFor(extended.size));
      // Global headers ('g') carry nothing this format uses; only per-entry ones ('x') apply.
      if (extended.typeFlag === TYPE_FLAG.paxHeader) pax = { ...pax, ...decodePaxRecords(data) };
      block = await reader.readExact(BLOCK_SIZE);
    }
    if (!block || isZeroBlock(block)) return;
    const header = decodeUstarBlock(block, pax, reader.position - BLOCK_SIZE);
    const dataSize = TYPES_WITHOUT_DATA.has(header.typeFlag) ? 0 : header.size;
    let consumed = 0;
    async function* body(): AsyncGenerator<Buffer> {
      for await (const chunk of reader.take(dataSize - consumed)) {
        consumed += chunk.length;
        yield chunk;
      }
    }
    yield { header, offset, dataSize, body };
    await reader.skip(dataSize - consumed);
    await reader.skip(paddingFor(dataSize));
  }
}
