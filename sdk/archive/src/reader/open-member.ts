import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { ArchiveInputError, ArchiveIntegrityError } from '../errors.js';
import type { IndexEntry } from '../format/index-schema.js';
import { ByteReader } from './byte-reader.js';
import { readMembers } from './members.js';
import type { RangeReader } from './range.js';

/** Kinds whose members hold content to read (files and database dumps). */
export const DATA_KINDS: ReadonlySet<string> = new Set(['file', 'database-dump']);

/**
 * Streams one file's or dump's uncompressed content with a single range read of exactly its bytes
 * (`entry.offset` to `entry.offset + entry.length - 1`), verifying size and SHA-256 against the index entry.
 * For an entry that references an earlier archive, pass that archive's range reader.
 */
export function openMember(rangeReader: RangeReader, entry: IndexEntry): Readable {
  if (!DATA_KINDS.has(entry.kind)) {
    throw new ArchiveInputError(`"${entry.path}" is a ${entry.kind}, which has no content to read`);
  }
  return Readable.from(memberContent(rangeReader, entry));
}

async function* memberContent(rangeReader: RangeReader, entry: IndexEntry): AsyncGenerator<Buffer> {
  const reader = new ByteReader(await rangeReader(entry.offset, entry.offset + entry.length - 1), entry.offset);
  try {
    const members = readMembers(reader);
    const first = await members.next();
    // A reference keeps the original path after a rename, so the member is matched by its offset as well.
    if (first.done || first.value.offset !== entry.offset || !DATA_KINDS.has(first.value.kind)) {
      throw new ArchiveIntegrityError(`no file member at byte ${entry.offset} for "${entry.path}" (wrong archive or stale index?)`);
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of first.value.data()) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
    const digest = hash.digest('hex');
    if (size !== entry.size || (entry.sha256 !== undefined && digest !== entry.sha256)) {
      throw new ArchiveIntegrityError(`content of "${entry.path}" does not match the index (size ${size}, expected ${entry.size})`);
    }
  } finally {
    await reader.close();
  }
}
