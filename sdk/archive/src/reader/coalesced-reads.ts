import { Readable } from 'node:stream';
import { ArchiveFormatError } from '../errors.js';
import type { RangeReader } from './range.js';

/**
 * The largest stretch of unwanted bytes (members not selected, format members) a run reads and drops rather than
 * ending there and starting a new range read: one more request costs a round trip on a remote destination.
 */
export const COALESCE_GAP_BYTES = 256 * 1024;

/** A member a restore will read: where its bytes lie, in which archive. */
export interface PlannedRead {
  archive: string;
  offset: number;
  length: number;
}

/**
 * Serves the range reads of a restore that walks a snapshot's entries in order. Members that lie one after the other in
 * an archive (gaps up to {@link COALESCE_GAP_BYTES}) are served from ONE range read of the whole stretch, each handed
 * out as a stream of exactly its own bytes. A restore of 50,000 small files is then a few reads of the archive instead
 * of 50,000 requests, each with its own read buffer, decryption record and plaintext buffer: garbage that made the
 * restore's memory saw-tooth by tens of MiB and cost a request per file.
 *
 * `plannedAt(i)` describes the i-th entry's read (undefined when it reads nothing): a run opened at entry i extends
 * over the following entries of the same archive while they stay in ascending order with small gaps, and stops at the
 * first that does not. So a run never reads a byte beyond the last member it was opened for, and reading one file
 * still reads only that file's bytes.
 */
export class CoalescedReads {
  private readonly runs = new Map<string, Run>();

  constructor(
    private readonly rangeReaderFor: (archive: string) => RangeReader,
    private readonly plannedAt: (index: number) => PlannedRead | undefined,
    private readonly entryCount: number,
  ) {}

  /** The range reader for the member of entry `index` (whose planned read must be defined). */
  readerFor(index: number): RangeReader {
    const planned = this.plannedAt(index);
    if (!planned) throw new RangeError(`entry ${index} has no content to read`);
    return async (start, end) => {
      const current = this.runs.get(planned.archive);
      if (current?.canServe(start, end)) return current.read(start, end);
      // Another member of this archive is still being read (not the order a restore reads in): a read of its own.
      if (current?.isBusy) return this.rangeReaderFor(planned.archive)(start, end);
      current?.close();
      const run = new Run(this.rangeReaderFor(planned.archive), start, this.runEnd(index, planned));
      this.runs.set(planned.archive, run);
      return run.read(start, end);
    };
  }

  /** Ends every open run (their range reads are destroyed). */
  close(): void {
    for (const run of this.runs.values()) run.close();
    this.runs.clear();
  }

  private runEnd(index: number, first: PlannedRead): number {
    let end = first.offset + first.length - 1;
    for (let next = index + 1; next < this.entryCount; next += 1) {
      const planned = this.plannedAt(next);
      if (!planned || planned.archive !== first.archive) continue;
      const gap = planned.offset - end - 1;
      if (gap < 0 || gap > COALESCE_GAP_BYTES) break;
      end = planned.offset + planned.length - 1;
    }
    return end;
  }
}

/** One open range read over `start..end`, handing out the members in it one after the other. */
class Run {
  isBusy = false;
  private iterator: AsyncIterator<Buffer> | undefined;
  private pending: Buffer = Buffer.alloc(0);
  /** Archive offset of `pending[0]`. */
  private position: number;
  private isBroken = false;

  constructor(private readonly rangeReader: RangeReader, start: number, private readonly end: number) {
    this.position = start;
  }

  canServe(start: number, end: number): boolean {
    return !this.isBusy && !this.isBroken && start >= this.position && start - this.position <= COALESCE_GAP_BYTES && end <= this.end;
  }

  read(start: number, end: number): Readable {
    this.isBusy = true;
    return Readable.from(this.bytes(start, end), { objectMode: false });
  }

  close(): void {
    this.isBroken = true;
    this.iterator?.return?.().catch(() => undefined);
  }

  private async *bytes(start: number, end: number): AsyncGenerator<Buffer> {
    try {
      while (this.position <= end) {
        if (this.pending.length === 0) this.pending = await this.nextChunk(end);
        // Bytes before `start` are a gap (or what an earlier reader left unread): dropped.
        const drop = Math.min(Math.max(0, start - this.position), this.pending.length);
        const take = Math.min(this.pending.length - drop, end + 1 - this.position - drop);
        const chunk = this.pending.subarray(drop, drop + take);
        this.pending = this.pending.subarray(drop + take);
        this.position += drop + take;
        if (chunk.length > 0) yield chunk;
      }
    } finally {
      // A reader that stopped early (a destroyed stream) leaves the position inside its member: the next member
      // drops the rest of it.
      this.isBusy = false;
    }
  }

  /** The range read's next chunk. A failed or short read ends the run: the next member opens a read of its own. */
  private async nextChunk(end: number): Promise<Buffer> {
    try {
      this.iterator ??= ((await this.rangeReader(this.position, this.end)) as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      const step = await this.iterator.next();
      if (step.done) throw new ArchiveFormatError(`unexpected end of archive at byte ${this.position}, before byte ${end}`);
      return step.value;
    } catch (error) {
      this.close();
      throw error;
    }
  }
}
