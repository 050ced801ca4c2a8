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

/** What the walk already knows of a file (its `lstat`, or `stat` when links are followed). */
export interface WalkedFile extends FileFacts {
  size: number;
}

/**
 * Reads the file when it still has the walk's size: one read of up to `size + 1` bytes that comes back with exactly
 * `size`. Answers undefined when the size changed (or a read was short or failed): the caller then stats the open
 * file. Regular files return fewer bytes than asked only at their end, so `size` bytes back from `size + 1` asked is
 * the whole file.
 */
async function readAsWalked(handle: FileHandle, size: number): Promise<Buffer | undefined> {
  const content = Buffer.allocUnsafe(size + 1);
  try {
    const { bytesRead } = await handle.read(content, 0, size + 1, 0);
    return bytesRead === size ? content.subarray(0, size) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens, reads and closes a small file (its read-ahead, started when the file is queued). When the file still has the
 * size the walk saw, the walk's facts go into its header and the open file is not stated again: on a tree of small
 * files each of those round trips to libuv's thread pool costs the main thread about 20 us (docs/benchmarks.md,
 * "Session 16"). Otherwise it is stated after the open and read for that size, as before. A file that cannot be
 * opened is answered as `openError`, a failed read as a zero-padded problem; only a failing stat or close rejects
 * (the dump then fails, as it does for a large file). A file larger than `limit` by now is closed again and answered
 * as `grown`.
 */
export async function readSmallFile(path: string, flags: number, limit: number, walked: WalkedFile): Promise<SmallFileRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags);
  } catch (error) {
    const { code, message } = error as Error & { code?: string };
    return { openError: { code, message } };
  }
  try {
    const asWalked = await readAsWalked(handle, walked.size);
    if (asWalked) return { facts: walked, content: asWalked };
    const stats = await handle.stat();
    if (stats.size > limit) return { grown: true };
    const facts: FileFacts = { mode: stats.mode, uid: stats.uid, gid: stats.gid, mtime: stats.mtime };
    return { facts, ...(await readWhole(handle, stats.size)) };
  } finally {
    await handle.close();
  }
}
