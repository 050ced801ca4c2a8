// chunksOf, the fixed-size cutter of the cloud-drive uploads (Dropbox, Google Drive, OneDrive).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunksOf } from '../src/index.js';

async function cut(pieces: string[], size: number) {
  const seen: Array<{ text: string; offset: number; isLast: boolean }> = [];
  for await (const { bytes, offset, isLast } of chunksOf(Readable.from(pieces.map((p) => Buffer.from(p))), size)) {
    seen.push({ text: bytes.toString(), offset, isLast }); // copied: the buffer is reused for the next chunk
  }
  return seen;
}

describe('chunksOf', () => {
  it('cuts across piece boundaries into exact sizes, the last one shorter', async () => {
    expect(await cut(['abc', 'defgh', 'ij'], 4)).toEqual([
      { text: 'abcd', offset: 0, isLast: false },
      { text: 'efgh', offset: 4, isLast: false },
      { text: 'ij', offset: 8, isLast: true },
    ]);
  });

  it('ends with an empty last chunk when the stream ends on a boundary', async () => {
    expect(await cut(['abcd'], 4)).toEqual([
      { text: 'abcd', offset: 0, isLast: false },
      { text: '', offset: 4, isLast: true },
    ]);
  });
});
