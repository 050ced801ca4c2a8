import { Readable } from 'node:stream';
import type { RangeReader } from '@holdfast/archive';
import type { StorageAdapter } from '@holdfast/kernel';
import { DecryptError } from '../codec/encryption/errors.js';
import { HEADER_LENGTH, TAG_LENGTH, assertProfileKey } from '../codec/encryption/format.js';
import { openHeader, openRecord, type OpenedHeader } from '../codec/encryption/open-record.js';

/** Options of {@link createArchiveRangeReader}. */
export interface ArchiveRangeReaderOptions {
  storage: StorageAdapter;
  /**
   * The destination declares `rangeReads` (StorageCapabilities); otherwise each read is a whole-object `get` cut down
   * to the range while streaming (never buffered whole, stream destroyed once the range is delivered).
   */
  canRangeRead: boolean;
  key: string;
  /** Size of the stored object in bytes (from stat). */
  storedSize: number;
  /** 32-byte HFENC profile key when the object is encrypted; null for a plain archive. */
  encryptionKey: Buffer | null;
  signal?: AbortSignal;
}

/** Plaintext access to one stored archive object. */
export interface ArchiveRangeReader {
  /** Streams plaintext bytes `start..endInclusive`; rejects a range outside `0..plaintextSize() - 1`. */
  read: RangeReader;
  /** Bytes of the plaintext archive: the stored size, less the HFENC header and tags when encrypted. */
  plaintextSize(): Promise<number>;
}

/** Where the records of an HFENC object lie, worked out from its header and its stored size. */
interface RecordLayout {
  opened: OpenedHeader;
  chunkSize: number;
  recordCount: number;
  plaintextSize: number;
}

type StoredRangeFetch = (start: number, endInclusive: number) => Promise<Readable>;

/**
 * Reads plaintext byte ranges of a stored archive, plain or HFENC-encrypted (docs/formats/encryption.md), so one
 * member of a seekable archive costs one range read of the records that hold it, not a download of the whole object.
 */
export function createArchiveRangeReader(options: ArchiveRangeReaderOptions): ArchiveRangeReader {
  const { key, storedSize } = options;
  if (!Number.isSafeInteger(storedSize) || storedSize < 0) {
    throw new RangeError(`stored size of "${key}" must be a non-negative integer, got ${storedSize}`);
  }
  const fetchStored: StoredRangeFetch = (start, end) => fetchStoredRange(options, start, end);
  if (!options.encryptionKey) {
    return {
      read: async (start, end) => {
        assertRangeWithin(key, start, end, storedSize);
        return fetchStored(start, end);
      },
      plaintextSize: () => Promise.resolve(storedSize),
    };
  }
  const profileKey = assertProfileKey(options.encryptionKey);
  let layout: Promise<RecordLayout> | undefined;
  const loadLayout = (): Promise<RecordLayout> => {
    if (!layout) {
      layout = readRecordLayout(fetchStored, profileKey, storedSize);
      // A failure (a dropped connection) is not remembered: the next read tries the header again.
      layout.catch(() => (layout = undefined));
    }
    return layout;
  };
  return {
    read: async (start, end) => {
      const records = await loadLayout();
      assertRangeWithin(key, start, end, records.plaintextSize);
      const first = Math.floor(start / records.chunkSize);
      const last = Math.floor(end / records.chunkSize);
      const recordLength = records.chunkSize + TAG_LENGTH;
      const cipherStart = HEADER_LENGTH + first * recordLength;
      const cipherEnd = Math.min(HEADER_LENGTH + (last + 1) * recordLength, storedSize) - 1;
      const source = await fetchStored(cipherStart, cipherEnd);
      return new RangeStream(source, decryptRecords(source, records, { first, last, start, end }));
    },
    plaintextSize: async () => (await loadLayout()).plaintextSize,
  };
}

/** A storage range read, or, for destinations without one, the whole object cut down to the range as it streams. */
async function fetchStoredRange(options: ArchiveRangeReaderOptions, start: number, end: number): Promise<Readable> {
  const { storage, key, signal } = options;
  if (options.canRangeRead) return storage.get(key, { range: { start, end }, signal });
  const whole = await storage.get(key, { signal });
  return new RangeStream(whole, cutToRange(whole, key, start, end));
}

async function* cutToRange(source: Readable, key: string, start: number, end: number): AsyncGenerator<Buffer> {
  let position = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    const chunkEnd = position + chunk.length;
    if (chunkEnd > start) yield chunk.subarray(Math.max(0, start - position), Math.min(chunk.length, end + 1 - position));
    position = chunkEnd;
    // Leaving the loop destroys the source: the rest of the object is never downloaded.
    if (position > end) return;
  }
  throw new Error(`"${key}" ended after ${position} bytes, before byte ${end}: the stored object is shorter than its size said`);
}

/** Reads and checks the header (HFENC rules and the key fingerprint), then derives where every record lies. */
async function readRecordLayout(fetchStored: StoredRangeFetch, profileKey: Buffer, storedSize: number): Promise<RecordLayout> {
  const headerLength = Math.min(HEADER_LENGTH, storedSize);
  const headerBytes = headerLength === 0 ? Buffer.alloc(0) : await readSmall(await fetchStored(0, headerLength - 1), headerLength);
  // A short header is judged like the decrypt stream does: foreign (< 5 bytes or other magic) or truncated.
  const opened = openHeader(headerBytes, profileKey);
  const { chunkSize } = opened.header;
  const recordBytes = storedSize - HEADER_LENGTH;
  if (recordBytes === 0) throw new DecryptError('TRUNCATED', 'truncated: final chunk missing');
  const recordCount = Math.ceil(recordBytes / (chunkSize + TAG_LENGTH));
  const lastRecordLength = recordBytes - (recordCount - 1) * (chunkSize + TAG_LENGTH);
  if (lastRecordLength < TAG_LENGTH) {
    throw new DecryptError('TRUNCATED', `truncated: chunk ${recordCount - 1} is incomplete`);
  }
  return { opened, chunkSize, recordCount, plaintextSize: recordBytes - TAG_LENGTH * recordCount };
}

async function readSmall(source: Readable, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).subarray(0, length);
}

interface RecordSpan {
  first: number;
  last: number;
  start: number;
  end: number;
}

/**
 * Opens records `first..last` from their ciphertext and yields only plaintext bytes `start..end` of them. One record
 * buffer is reused, and a record's plaintext is released only once its tag verified.
 */
async function* decryptRecords(source: Readable, layout: RecordLayout, span: RecordSpan): AsyncGenerator<Buffer> {
  const { chunkSize, recordCount, plaintextSize } = layout;
  // Unzeroed: every byte is copied in before the record is opened (one range read per restored file adds up).
  const record = Buffer.allocUnsafe(chunkSize + TAG_LENGTH);
  // The last record is whatever follows the full ones; its length follows from the plaintext size.
  const lengthOf = (index: number): number =>
    index === recordCount - 1 ? plaintextSize - index * chunkSize + TAG_LENGTH : chunkSize + TAG_LENGTH;
  let index = span.first;
  let filled = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    let offset = 0;
    while (offset < chunk.length && index <= span.last) {
      const copied = chunk.copy(record, filled, offset, offset + lengthOf(index) - filled);
      filled += copied;
      offset += copied;
      if (filled < lengthOf(index)) continue;
      const isFinal = index === recordCount - 1;
      const plaintext = openRecord(layout.opened, record.subarray(0, filled), BigInt(index), isFinal);
      const base = index * chunkSize;
      const wanted = plaintext.subarray(Math.max(0, span.start - base), Math.min(plaintext.length, span.end + 1 - base));
      if (wanted.length > 0) yield wanted;
      index += 1;
      filled = 0;
    }
    if (index > span.last) return;
  }
  throw new DecryptError('TRUNCATED', `truncated: chunk ${index} is incomplete`);
}

/**
 * A byte stream over `chunks`, read from `source`. Destroying it destroys the source at once: an async generator
 * behind `Readable.from` only stops at its next yield, which a stalled destination may never reach.
 */
class RangeStream extends Readable {
  constructor(
    private readonly source: Readable,
    private readonly chunks: AsyncGenerator<Buffer>,
  ) {
    super();
  }

  override _read(): void {
    this.chunks.next().then(
      (step) => {
        if (!this.destroyed) this.push(step.done ? null : step.value);
      },
      (error: unknown) => this.destroy(error as Error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.source.destroy();
    this.chunks.return(undefined).catch(() => undefined);
    callback(error);
  }
}

function assertRangeWithin(key: string, start: number, end: number, size: number): void {
  let problem: string | undefined;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) problem = 'offsets must be integers';
  else if (start > end) problem = 'start is after end';
  else if (start < 0 || end >= size) problem = size === 0 ? 'the archive is empty' : `the archive holds bytes 0..${size - 1}`;
  if (problem) throw new RangeError(`cannot read bytes ${start}..${end} of "${key}": ${problem}`);
}
