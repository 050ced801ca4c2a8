import { createDecipheriv } from 'node:crypto';
import { DecryptError } from './errors.js';
import { TAG_LENGTH, chunkAad, chunkNonce, decodeHeader, deriveDataKey, keyFingerprint, type EncryptionHeader } from './format.js';

// Shared by the sequential decrypt stream and the random-access range reader, so both open records (and word their
// failures) exactly as docs/formats/encryption.md says.

/** What opening records needs from a checked header: its fields, its bytes (part of every AAD) and the data key. */
export interface OpenedHeader {
  header: EncryptionHeader;
  headerBytes: Buffer;
  dataKey: Buffer;
}

/** Decodes a header, checks it was written for `profileKey` and derives the backup's data key. */
export function openHeader(headerBytes: Buffer, profileKey: Buffer): OpenedHeader {
  const header = decodeHeader(headerBytes);
  const expected = keyFingerprint(profileKey);
  if (!expected.equals(header.keyFingerprint)) {
    throw new DecryptError(
      'WRONG_KEY',
      `wrong key: this backup needs the key with fingerprint ${header.keyFingerprint.toString('hex')}, ` +
        `the given key has fingerprint ${expected.toString('hex')}`,
    );
  }
  return { header, headerBytes, dataKey: deriveDataKey(profileKey, header.salt) };
}

/**
 * Opens record `index` (ciphertext and tag, at least 16 bytes) and returns its plaintext, or throws the
 * `DecryptError` the format prescribes. `isFinal` says whether the record is the last one of the file.
 */
export function openRecord(opened: OpenedHeader, record: Buffer, index: bigint, isFinal: boolean): Buffer {
  const plaintext = tryOpen(opened, record, index, isFinal);
  if (plaintext) return plaintext;
  // Only to word the error: a record that opens with the other flag tells truncation and appending apart.
  if (tryOpen(opened, record, index, !isFinal)) {
    if (isFinal) throw new DecryptError('TRUNCATED', 'truncated: final chunk missing');
    throw new DecryptError('TRAILING_DATA', 'unexpected data after the final chunk');
  }
  throw new DecryptError('AUTH_FAILED', `chunk ${index} failed authentication`);
}

function tryOpen(opened: OpenedHeader, record: Buffer, index: bigint, isFinal: boolean): Buffer | undefined {
  const bodyLength = record.length - TAG_LENGTH;
  const decipher = createDecipheriv('aes-256-gcm', opened.dataKey, chunkNonce(opened.header.noncePrefix, index));
  decipher.setAAD(chunkAad(opened.headerBytes, index, isFinal));
  decipher.setAuthTag(record.subarray(bodyLength));
  const body = decipher.update(record.subarray(0, bodyLength));
  let rest: Buffer;
  try {
    rest = decipher.final();
  } catch {
    return undefined;
  }
  return rest.length > 0 ? Buffer.concat([body, rest]) : body;
}
