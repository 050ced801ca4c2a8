import { createHash } from 'node:crypto';
import { JSONParser } from '@streamparser/json';
import { ArchiveFormatError, ArchiveIntegrityError } from '../errors.js';
import { INDEX_HEADER_LENGTH, indexFormatError, indexHeadSchema, recordedIndexChecksum, toArchiveIndex } from './index-file.js';
import { indexEntrySchema, type ArchiveIndex, type IndexEntry } from './index-schema.js';

/**
 * Decodes an index file as it arrives, with the same checks and results as `decodeIndexFile` but without ever holding
 * the file or its JSON text whole: entries are parsed one by one (a streaming JSON parser), validated, and kept as
 * parsed. For 50,000 files the whole-file decode held the bytes (15 MB), the text (twice that once one name is not
 * Latin-1) and the parsed entries at once.
 *
 * The checksum covers the whole JSON, so it is known only at the end: a parse or validation error is kept, the rest is
 * still hashed, and a mismatch (the usual cause of broken JSON) is reported first, like the whole-file decode does.
 * `maxBytes` bounds what a hostile or broken source can make it read.
 */
export async function decodeIndexStream(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>, maxBytes: number, tooLarge: () => Error): Promise<ArchiveIndex> {
  const hash = createHash('sha256');
  const entries: IndexEntry[] = [];
  let head: unknown;
  let parseError: ArchiveFormatError | undefined;
  const parser = new JSONParser({ paths: ['$.entries.*', '$'], keepStack: false });
  parser.onValue = ({ value, stack }) => {
    if (parseError) return;
    if (stack.length === 0) {
      head = value;
      return;
    }
    const position = entries.length;
    const result = indexEntrySchema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      parseError = indexFormatError(['entries', position, ...(issue?.path ?? [])], issue?.message ?? 'invalid');
      return;
    }
    entries.push(value as IndexEntry);
  };
  parser.onError = (error) => {
    parseError ??= new ArchiveFormatError(`index JSON does not parse: ${error.message}`);
  };

  let header = Buffer.alloc(0);
  let total = 0;
  const feed = (bytes: Buffer) => {
    hash.update(bytes);
    if (parseError) return;
    if (parser.isEnded) {
      // Once the root value is complete the parser takes no more input; JSON.parse accepts trailing whitespace only.
      if (bytes.toString('latin1').trim() !== '') parseError = new ArchiveFormatError('index JSON does not parse: data after the end of the document');
      return;
    }
    parser.write(bytes);
  };
  for await (const chunk of source) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += bytes.length;
    if (total > maxBytes) throw tooLarge();
    if (header.length < INDEX_HEADER_LENGTH) {
      const wanted = INDEX_HEADER_LENGTH - header.length;
      header = Buffer.concat([header, bytes.subarray(0, wanted)]);
      bytes = bytes.subarray(wanted);
      if (header.length < INDEX_HEADER_LENGTH) continue;
      recordedIndexChecksum(header);
    }
    if (bytes.length > 0) feed(bytes);
  }
  const expected = recordedIndexChecksum(header);
  const actual = hash.digest('hex');
  if (actual !== expected) throw new ArchiveIntegrityError(`index checksum mismatch (recorded ${expected}, computed ${actual})`);
  if (!parseError && !parser.isEnded) {
    try {
      parser.end();
    } catch {
      // onError has recorded it.
    }
    parseError ??= new ArchiveFormatError('index JSON does not parse: the document ends early');
  }
  if (parseError) throw parseError;
  const headResult = indexHeadSchema.safeParse(head);
  if (!headResult.success) {
    const issue = headResult.error.issues[0];
    throw indexFormatError(issue?.path ?? [], issue?.message ?? 'invalid');
  }
  // Emitted entries are taken out of the document (keepStack: false), which leaves an empty array where they were.
  if (!Array.isArray((head as { entries?: unknown }).entries)) throw indexFormatError(['entries'], 'expected an array');
  return toArchiveIndex(headResult.data, entries);
}
