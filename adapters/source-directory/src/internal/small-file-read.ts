import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { describeFileError } from './errors.js';
import { encodeHeader, paddingOf, type TarHeader } from './tar-header.js';
import type { ArchiveEntry } from './walk.js';
import type { WarningList } from './warnings.js';

/** What the header of a file takes from its stats, besides the name, type and size. */
export type HeaderFacts = (stats: Pick<Stats, 'mode' | 'mtime' | 'uid' | 'gid'>) => Omit<TarHeader, 'name' | 'type' | 'size'>;

/** Where a tar is written: {@link TarOutput} in this process, the synchronous sink of the archive writer's child. */
export interface TarSink {
  append(bytes: Buffer): void;
  zeros(count: number): void;
  reserve(length: number): { buffer: Buffer; offset: number; room: number };
  commit(length: number): void;
}

/** Reads `size` bytes from the start of `fd`; a short or failed read is zero-padded and named as a problem. */
function readWhole(fd: number, size: number): { content: Buffer; problem?: string } {
  // Not zero-filled up front (the read overwrites it): only the padding after a failed or short read is zeroed.
  const content = Buffer.allocUnsafe(size);
  let position = 0;
  try {
    while (position < size) {
      const bytesRead = readSync(fd, content, position, size - position, position);
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
 * Adds a small file to the tar with synchronous calls on the calling thread: open, one read of its walked size plus
 * one byte straight into the tar's chunk behind its header, close. Page-cache reads take microseconds; each round
 * trip to libuv's thread pool cost the main thread about 20 us and four of them per file made a tree of small files
 * 7-16 times slower than `tar | zstd` (docs/benchmarks.md, 2026-12-07). The caller yields to the event loop every
 * few milliseconds.
 *
 * When exactly the walked size comes back, the walk's mode, owner and time go into the header. Otherwise the open file
 * is stated and read for its size now (zero-padded, with a warning, when it shrinks meanwhile). A file that cannot be
 * opened is skipped with a warning; one larger than `limit` by now is answered `grown` (the caller streams it); a
 * failing stat or close throws (the dump fails, as for a large file).
 */
export function addSmallFile(out: TarSink, entry: ArchiveEntry, flags: number, limit: number, facts: HeaderFacts, warnings: WarningList): 'added' | 'grown' {
  let fd: number;
  try {
    fd = openSync(entry.absolute, flags);
  } catch (error) {
    warnings.add(`${entry.absolute}: skipped, ${describeFileError(error)}`);
    return 'added';
  }
  try {
    const size = entry.stats.size;
    const header = encodeHeader({ name: entry.member, type: 'file', size, ...facts(entry.stats) });
    const padding = paddingOf(size);
    const { buffer, offset } = out.reserve(header.length + size + 1 + padding);
    const bodyAt = offset + header.length;
    let bytesRead = -1;
    try {
      bytesRead = readSync(fd, buffer, bodyAt, size + 1, 0);
    } catch {
      // Read again below, after a stat, where a failure is zero-padded and named.
    }
    if (bytesRead === size) {
      header.copy(buffer, offset);
      buffer.fill(0, bodyAt + size, bodyAt + size + padding);
      out.commit(header.length + size + padding);
      return 'added';
    }
    const stats = fstatSync(fd);
    if (stats.size > limit) return 'grown';
    const { content, problem } = readWhole(fd, stats.size);
    out.append(encodeHeader({ name: entry.member, type: 'file', size: content.length, ...facts(stats) }));
    out.append(content);
    out.zeros(paddingOf(content.length));
    if (problem) warnings.add(`${entry.absolute}: ${problem}`);
    return 'added';
  } finally {
    closeSync(fd);
  }
}
