import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

const BLOCK = 64 * 1024;
const ZERO = Buffer.alloc(BLOCK);

/**
 * A file Writable that leaves runs of zeros as holes, so an archive holding a mostly-empty 8 GiB member costs almost
 * nothing on disk. GNU tar seeks over member data when listing a regular file, so it can still list such an archive.
 */
export function sparseFileSink(path: string): Writable {
  let handle: FileHandle | undefined;
  let position = 0;
  return new Writable({
    highWaterMark: 1024 * 1024,
    construct(callback) {
      open(path, 'w').then((opened) => {
        handle = opened;
        callback();
      }, callback);
    },
    write(chunk: Buffer, _encoding, callback) {
      (async () => {
        for (let start = 0; start < chunk.length; start += BLOCK) {
          const block = chunk.subarray(start, start + BLOCK);
          if (!block.equals(ZERO.subarray(0, block.length))) await handle?.write(block, 0, block.length, position);
          position += block.length;
        }
      })().then(() => callback(), callback);
    },
    final(callback) {
      (async () => {
        await handle?.truncate(position);
        await handle?.close();
      })().then(() => callback(), callback);
    },
  });
}
