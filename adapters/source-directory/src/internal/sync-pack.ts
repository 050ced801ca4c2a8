import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { KernelLogger } from '@holdfast/sdk';
import { describeFileError } from './errors.js';
import { asError, headerOf, settlePiece, SMALL_FILE_BYTES } from './pack.js';
import { addSmallFile, type TarSink } from './small-file-read.js';
import { encodeHeader, paddingOf } from './tar-header.js';
import { walkRoots, type ArchiveEntry, type ArchiveRoot } from './walk.js';
import type { WarningList } from './warnings.js';

// Bytes gathered before one write into the pipe: 1 GiB of 8 MiB files went through `| zstd` as fast with 128 KiB as
// with 1 MiB (docs/benchmarks.md, "The archive writer's own process"), and a small buffer stays in the CPU's cache.
const SINK_BYTES = 256 * 1024;
// A large file is read in pieces of at least this much, straight into the sink's buffer.
const MIN_READ = 64 * 1024;
// What tar-stream's `finalize` writes at the end: two zero blocks (as tar-output.ts).
const END_OF_ARCHIVE = Buffer.alloc(1024);

/** What the archive writer's child is told (JSON on its command line). */
export interface SyncPackPlan {
  roots: ArchiveRoot[];
  exclude: string[];
  followSymlinks: boolean;
}

/**
 * A tar sink writing into a file descriptor with blocking writes: one buffer, reused, written out whenever it is full.
 * Used in the archive writer's own process, where nothing else waits for the event loop.
 */
export class SyncTarSink implements TarSink {
  /** Bytes written into the descriptor so far. */
  bytes = 0;
  private readonly buffer = Buffer.allocUnsafe(SINK_BYTES);
  private used = 0;

  constructor(
    private readonly fd: number,
    private readonly onFlush: (bytes: number) => void = () => undefined,
  ) {}

  append(bytes: Buffer): void {
    let from = 0;
    while (from < bytes.length) {
      const copied = bytes.copy(this.buffer, this.used, from);
      this.used += copied;
      from += copied;
      if (this.used === SINK_BYTES) this.flush();
    }
  }

  zeros(count: number): void {
    let left = count;
    while (left > 0) {
      const length = Math.min(left, SINK_BYTES - this.used);
      this.buffer.fill(0, this.used, this.used + length);
      this.used += length;
      left -= length;
      if (this.used === SINK_BYTES) this.flush();
    }
  }

  reserve(length: number): { buffer: Buffer; offset: number; room: number } {
    if (length > SINK_BYTES) throw new RangeError(`cannot reserve ${length} bytes in a buffer of ${SINK_BYTES}`);
    if (SINK_BYTES - this.used < length) this.flush();
    return { buffer: this.buffer, offset: this.used, room: SINK_BYTES - this.used };
  }

  commit(length: number): void {
    this.used += length;
    if (this.used === SINK_BYTES) this.flush();
  }

  /** Writes out what the buffer holds (a blocking write: the pipe's reader sets the pace). */
  flush(): void {
    let written = 0;
    while (written < this.used) written += writeSync(this.fd, this.buffer, written, this.used - written);
    this.bytes += this.used;
    this.used = 0;
    this.onFlush(this.bytes);
  }
}

/** One blocking read: the bytes read, or the error (settlePiece names it). */
function readPiece(fd: number, buffer: Buffer, offset: number, length: number, position: number): number | Error {
  try {
    return readSync(fd, buffer, offset, length, position);
  } catch (error) {
    return asError(error);
  }
}

/**
 * Copies a large file (opened, stated now) the way pack.ts's copyFile does: exactly the size in its header, a file
 * that shrinks is zero-padded and one that grows is cut, with the same warnings; so both writers give the same bytes.
 */
function copyLargeFile(sink: TarSink, entry: ArchiveEntry, fd: number, warnings: WarningList): void {
  const stats = fstatSync(fd);
  const size = stats.size;
  sink.append(encodeHeader({ name: entry.member, type: 'file', size, ...headerOf(entry, stats) }));
  let position = 0;
  let problem: string | undefined;
  while (position < size) {
    const { buffer, offset, room } = sink.reserve(Math.min(MIN_READ, size - position));
    const length = Math.min(room, size - position);
    const piece = settlePiece(buffer, offset, length, problem === undefined ? readPiece(fd, buffer, offset, length, position) : 0, problem);
    problem = piece.problem;
    sink.commit(piece.bytes);
    position += piece.bytes;
  }
  sink.zeros(paddingOf(size));
  if (problem) warnings.add(`${entry.absolute}: ${problem}`);
}

function addLargeFile(sink: TarSink, entry: ArchiveEntry, flags: number, warnings: WarningList): void {
  let fd: number;
  try {
    fd = openSync(entry.absolute, flags);
  } catch (error) {
    warnings.add(`${entry.absolute}: skipped, ${describeFileError(error)}`);
    return;
  }
  try {
    copyLargeFile(sink, entry, fd, warnings);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the tar of `plan` into `sink` with synchronous calls only, entry for entry as pack.ts's writeArchive writes
 * it (same walk, same headers, same handling of files that change or vanish): the archive is byte-identical, it only
 * runs where blocking is free (the archive writer's child, pack-child.ts).
 */
export function packSync(plan: SyncPackPlan, sink: SyncTarSink, warnings: WarningList, logger: KernelLogger): void {
  const flags = constants.O_RDONLY | (plan.followSymlinks ? 0 : constants.O_NOFOLLOW);
  const signal = new AbortController().signal;
  const entries = walkRoots(plan.roots, { exclude: plan.exclude, followSymlinks: plan.followSymlinks, warnings, logger, signal });
  if (Symbol.asyncIterator in entries) throw new Error('the synchronous writer needs a synchronous walk');
  for (const entry of entries) {
    if (entry.kind === 'directory') {
      sink.append(encodeHeader({ name: `${entry.member}/`, type: 'directory', size: 0, ...headerOf(entry, entry.stats) }));
    } else if (entry.kind === 'symlink') {
      sink.append(encodeHeader({ name: entry.member, type: 'symlink', size: 0, linkname: entry.linkTarget, ...headerOf(entry, entry.stats) }));
    } else if (entry.stats.size > SMALL_FILE_BYTES) {
      addLargeFile(sink, entry, flags, warnings);
    } else if (addSmallFile(sink, entry, flags, SMALL_FILE_BYTES, (stats) => headerOf(entry, stats), warnings) === 'grown') {
      addLargeFile(sink, entry, flags, warnings);
    }
  }
  sink.append(END_OF_ARCHIVE);
  sink.flush();
}
