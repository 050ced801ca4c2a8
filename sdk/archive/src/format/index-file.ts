import { createHash } from 'node:crypto';
import { ArchiveFormatError, ArchiveIntegrityError } from '../errors.js';
import { archiveIndexSchema, type ArchiveIndex } from './index-schema.js';

// The index file (index member data and `.index` sidecar, before any sealing) is one checksum line and the JSON:
//   HOLDFAST-INDEX 1 sha256=<hex of the JSON bytes>\n{...}
// The line lets a reader reject a changed or truncated index before trusting a single offset in it.
const MAGIC = 'HOLDFAST-INDEX 1 sha256=';
const HEADER_LENGTH = MAGIC.length + 64 + 1;

/** Serialises an index with its checksum line. */
export function encodeIndexFile(index: ArchiveIndex): Buffer {
  const json = Buffer.from(JSON.stringify(index), 'utf8');
  const digest = createHash('sha256').update(json).digest('hex');
  return Buffer.concat([Buffer.from(`${MAGIC}${digest}\n`, 'ascii'), json]);
}

/** True when the bytes start like an unsealed index file (a sealed one needs the caller's unseal hook first). */
export function looksLikeIndexFile(bytes: Buffer): boolean {
  return bytes.subarray(0, MAGIC.length).toString('latin1') === MAGIC;
}

/** Verifies the checksum line, then parses and validates the JSON. */
export function decodeIndexFile(bytes: Buffer): ArchiveIndex {
  if (!looksLikeIndexFile(bytes) || bytes[HEADER_LENGTH - 1] !== 0x0a) {
    throw new ArchiveFormatError('the index does not start with "HOLDFAST-INDEX 1" (sealed? pass unsealIndex)');
  }
  const expected = bytes.subarray(MAGIC.length, MAGIC.length + 64).toString('latin1');
  const json = bytes.subarray(HEADER_LENGTH);
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
  const result = archiveIndexSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ArchiveFormatError(`index does not match format version 1 at ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return result.data;
}
