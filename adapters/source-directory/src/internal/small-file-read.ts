import { open, type FileHandle } from 'node:fs/promises';

/** What the tar header of a file needs of its stats, taken after the open (the size is the content's). */
export interface FileFacts {
  mode: number;
  uid: number;
  gid: number;
  mtime: Date;
}

/**
 * One small file read: its facts and whole content (zero-padded when it shrank, with the problem named); `grown` when
 * it is larger than the limit by now (the caller streams it like a large file); or why it could not be opened.
 */
export type SmallFileRead =
  | { facts: FileFacts; content: Buffer; problem?: string }
  | { grown: true }
  | { openError: { code?: string; message: string } };

/** Reads `size` bytes from the start of `handle`; a short or failed read is zero-padded and named as a problem. */
async function readWhole(handle: FileHandle, size: number): Promise<{ content: Buffer; problem?: string }> {
  // Not zero-filled up front (the read overwrites it): only the padding after a failed or short read is zeroed.
  const content = Buffer.allocUnsafe(size);
  let position = 0;
  try {
    while (position < size) {
      const { bytesRead } = await handle.read(content, position, size - position, position);
      if (bytesRead === 0) {
        content.fill(0, position);
        return { content, problem: 'it shrank while it was read; the rest is zero-filled' };
      }
      position += bytesRead;
    }
    return { content };
  } catch (error) {
    content.fill(0, position);
    return { content, problem: `a read failed (${(error as Error).message}); the rest is zero-filled` };
  }
}

/**
 * Opens, stats, reads and closes a small file (its read-ahead, started when the file is queued). A file that cannot be
 * opened is answered as `openError`, a failed read as a zero-padded problem; only a failing stat or close rejects
 * (the dump then fails, as it does for a large file). A file larger than `limit` by now is closed again and answered
 * as `grown`.
 */
export async function readSmallFile(path: string, flags: number, limit: number): Promise<SmallFileRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags);
  } catch (error) {
    const { code, message } = error as Error & { code?: string };
    return { openError: { code, message } };
  }
  try {
    const stats = await handle.stat();
    if (stats.size > limit) return { grown: true };
    const facts: FileFacts = { mode: stats.mode, uid: stats.uid, gid: stats.gid, mtime: stats.mtime };
    return { facts, ...(await readWhole(handle, stats.size)) };
  } finally {
    await handle.close();
  }
}
