import { createHash } from 'node:crypto';
import { ArchiveFormatError, ArchiveIntegrityError } from '../errors.js';
import type { z } from 'zod';
import { archiveIndexSchema, indexEntrySchema, type ArchiveIndex, type IndexEntry } from './index-schema.js';

// The index file (index member data and `.index` sidecar, before any sealing) is one checksum line and the JSON:
//   HOLDFAST-INDEX 1 sha256=<hex of the JSON bytes>\n{...}
// The line lets a reader reject a changed or truncated index before trusting a single offset in it.
export const INDEX_MAGIC = 'HOLDFAST-INDEX 1 sha256=';
/** Bytes of the checksum line, newline included. */
export const INDEX_HEADER_LENGTH = INDEX_MAGIC.length + 64 + 1;
// The arrays that grow with the number of files; everything else in an index is a few hundred bytes.
const LIST_KEYS = new Set(['entries', 'deletions', 'renames']);
// Entries are serialised in batches of about this many characters (see indexJsonPieces).
const PIECE_CHARS = 64 * 1024;

/**
 * The index's JSON in pieces, byte for byte what `JSON.stringify(index)` gives (same key order, absent keys left
 * out), without ever holding it as one string: for 50,000 files that string is 15 MB, twice that in UTF-16 once a
 * single name is not Latin-1, and the whole-document encoding kept three such copies alive at once.
 */
function* indexJsonPieces(index: ArchiveIndex): Generator<string> {
  let separator = '{';
  for (const [key, value] of Object.entries(index)) {
    if (value === undefined) continue;
    if (!LIST_KEYS.has(key) || !Array.isArray(value)) {
      yield `${separator}${JSON.stringify(key)}:${JSON.stringify(value)}`;
    } else {
      yield `${separator}${JSON.stringify(key)}:[`;
      let batch: string[] = [];
      let batchChars = 0;
      for (const [position, item] of value.entries()) {
        const text = `${position === 0 ? '' : ','}${JSON.stringify(item)}`;
        batch.push(text);
        batchChars += text.length;
        if (batchChars >= PIECE_CHARS) {
          yield batch.join('');
          batch = [];
          batchChars = 0;
        }
      }
      yield `${batch.join('')}]`;
    }
    separator = ',';
  }
  yield separator === '{' ? '{}' : '}';
}

/**
 * Serialises an index with its checksum line. Two passes over the pieces (the first for the checksum and the length,
 * the second writes into the one buffer returned), so the only large allocation is the result itself.
 */
export function encodeIndexFile(index: ArchiveIndex): Buffer {
  const { sha256, length } = measureIndexJson(index);
  const file = Buffer.allocUnsafe(INDEX_HEADER_LENGTH + length);
  let offset = file.write(`${INDEX_MAGIC}${sha256}\n`, 0, 'latin1');
  for (const piece of indexJsonPieces(index)) offset += file.write(piece, offset, 'utf8');
  if (offset !== file.length) throw new Error(`index encoding wrote ${offset} of ${file.length} bytes`);
  return file;
}

/** An index file that is produced afresh, in pieces, each time it is read: never held as one buffer. */
export interface IndexFileBytes {
  /** Bytes of the whole file, checksum line included. */
  readonly length: number;
  /** The file's bytes in pieces of about 64 KiB (the checksum line first). */
  chunks(): Generator<Buffer>;
}

/**
 * The index file of `index` as {@link IndexFileBytes}: one pass now for the checksum and the length, one more per
 * reading. The entries must not change in between; a reading that would differ from the checksum line fails instead
 * of writing a file readers would reject.
 */
export function indexFileBytes(index: ArchiveIndex): IndexFileBytes {
  const { sha256, length } = measureIndexJson(index);
  const headerLine = `${INDEX_MAGIC}${sha256}\n`;
  return {
    length: INDEX_HEADER_LENGTH + length,
    *chunks() {
      yield Buffer.from(headerLine, 'latin1');
      const hash = createHash('sha256');
      for (const piece of indexJsonPieces(index)) {
        const bytes = Buffer.from(piece, 'utf8');
        hash.update(bytes);
        yield bytes;
      }
      const again = hash.digest('hex');
      if (again !== sha256) throw new Error(`the index changed while it was written (checksum ${sha256}, now ${again})`);
    },
  };
}

/** A buffer's bytes as {@link IndexFileBytes} (a sealed index is one buffer: the seal hook takes and returns it whole). */
export function bufferedIndexFile(bytes: Buffer): IndexFileBytes {
  return {
    length: bytes.length,
    *chunks() {
      for (let start = 0; start < bytes.length; start += PIECE_CHARS) yield bytes.subarray(start, start + PIECE_CHARS);
    },
  };
}

function measureIndexJson(index: ArchiveIndex): { sha256: string; length: number } {
  const hash = createHash('sha256');
  let length = 0;
  for (const piece of indexJsonPieces(index)) {
    hash.update(piece, 'utf8');
    length += Buffer.byteLength(piece, 'utf8');
  }
  return { sha256: hash.digest('hex'), length };
}

/**
 * Checks the checksum line at the start of `bytes` (at least its INDEX_HEADER_LENGTH bytes) and answers the SHA-256
 * it records for the JSON that follows.
 */
export function recordedIndexChecksum(bytes: Buffer): string {
  if (bytes.length < INDEX_HEADER_LENGTH || !looksLikeIndexFile(bytes) || bytes[INDEX_HEADER_LENGTH - 1] !== 0x0a) {
    throw new ArchiveFormatError('the index does not start with "HOLDFAST-INDEX 1" (sealed? pass unsealIndex)');
  }
  return bytes.subarray(INDEX_MAGIC.length, INDEX_MAGIC.length + 64).toString('latin1');
}

/** True when the bytes start like an unsealed index file (a sealed one needs the caller's unseal hook first). */
export function looksLikeIndexFile(bytes: Buffer): boolean {
  return bytes.subarray(0, INDEX_MAGIC.length).toString('latin1') === INDEX_MAGIC;
}

/** Everything of an index but its entries, which are validated one by one. */
export const indexHeadSchema = archiveIndexSchema.omit({ entries: true });

/** The error for an index that does not match the format, naming where (`entries.12.mode`). */
export function indexFormatError(path: PropertyKey[], message: string): ArchiveFormatError {
  return new ArchiveFormatError(`index does not match format version 1 at ${path.map(String).join('.')}: ${message}`);
}

/** The index in the schema's key order, so an index read and written again gives the same bytes. */
export function toArchiveIndex(head: z.output<typeof indexHeadSchema>, entries: IndexEntry[]): ArchiveIndex {
  const { format, version, archiveName, createdAt, chain, deletions, renames } = head;
  return { format, version, ...(archiveName === undefined ? {} : { archiveName }), createdAt, chain, entries, deletions, renames };
}

/**
 * Verifies the checksum line, then parses and validates the JSON. Entries are validated one by one and kept as
 * parsed (a whole-document parse copied every entry a second time: 34 MiB for 50,000 files).
 */
export function decodeIndexFile(bytes: Buffer): ArchiveIndex {
  const expected = recordedIndexChecksum(bytes);
  const json = bytes.subarray(INDEX_HEADER_LENGTH);
  const actual = createHash('sha256').update(json).digest('hex');
  if (actual !== expected) {
    throw new ArchiveIntegrityError(`index checksum mismatch (recorded ${expected}, computed ${actual})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'));
  } catch (error) {
    throw new ArchiveFormatError(`index JSON does not parse: ${(error as Error).message}`);
  }
  const head = indexHeadSchema.safeParse(parsed);
  if (!head.success) {
    const issue = head.error.issues[0];
    throw indexFormatError(issue?.path ?? [], issue?.message ?? 'invalid');
  }
  const entries = (parsed as { entries?: unknown }).entries;
  if (!Array.isArray(entries)) throw indexFormatError(['entries'], 'expected an array');
  for (const [position, entry] of entries.entries()) {
    const result = indexEntrySchema.safeParse(entry);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw indexFormatError(['entries', position, ...(issue?.path ?? [])], issue?.message ?? 'invalid');
    }
  }
  return toArchiveIndex(head.data, entries as IndexEntry[]);
}
