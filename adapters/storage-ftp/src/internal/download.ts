import { posix } from 'node:path';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { resolveByteRange } from '@holdfast/sdk';
import { FTP_ORIGIN, notFound, toAdapterError } from './errors.js';
import type { FtpPool } from './pool.js';
import { sizeOrMissing } from './remote-ops.js';

/** Passes the first `length` bytes, then ends its readable side and calls `onDone` (to stop the transfer). */
class ByteLimit extends Transform {
  isDone = false;

  constructor(
    private remaining: number,
    private readonly onDone: () => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.isDone) return callback();
    const part = chunk.length > this.remaining ? chunk.subarray(0, this.remaining) : chunk;
    this.remaining -= part.length;
    this.push(part);
    if (this.remaining === 0) {
      this.isDone = true;
      this.push(null);
      this.onDone();
    }
    callback();
  }
}

/**
 * Opens a download (RETR, after REST for a range start) on a connection of its own, held until the stream ends or is
 * destroyed; the end of a range is cut here, then the connection is closed, because FTP cannot stop a transfer early.
 */
export async function openDownload(pool: FtpPool, key: string, range: { start: number; end?: number } | undefined): Promise<Readable> {
  let borrowed: Awaited<ReturnType<FtpPool['acquire']>>;
  try {
    borrowed = await pool.acquire();
  } catch (error) {
    throw toAdapterError(error, `cannot read "${key}"`);
  }
  const { client } = borrowed;
  const path = posix.join(borrowed.root, key);
  let isReleased = false;
  const release = (isReusable: boolean) => {
    if (isReleased) return;
    isReleased = true;
    pool.release(client, isReusable);
  };
  let size: number | undefined;
  let bounds: { start?: number; end?: number };
  try {
    size = await sizeOrMissing(client, path);
    if (size === undefined) throw notFound(key);
    bounds = resolveByteRange(FTP_ORIGIN, key, size, range);
  } catch (error) {
    release(true);
    throw toAdapterError(error, `cannot read "${key}"`);
  }
  const start = bounds.start ?? 0;
  const end = bounds.end ?? size - 1;
  let isTransferDone = false;
  const output: PassThrough | ByteLimit = end < size - 1 ? new ByteLimit(end - start + 1, () => client.close()) : new PassThrough();
  client.downloadTo(output, path, start).then(
    () => {
      isTransferDone = true;
      release(true);
    },
    (error: unknown) => {
      isTransferDone = true;
      release(false);
      if (output instanceof ByteLimit && output.isDone) return; // we closed the connection on purpose
      output.destroy(toAdapterError(error, `cannot read "${key}"`));
    },
  );
  // A reader that gives up early: closing the connection is the only way to stop the transfer.
  output.once('close', () => {
    if (!isTransferDone) client.close();
  });
  return output;
}
