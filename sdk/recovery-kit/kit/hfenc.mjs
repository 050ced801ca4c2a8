// HFENC v1 (Holdfast encrypted files) for the recovery kit: key handling, the streaming decrypter and a random-access
// reader. Node.js >= 18, no dependencies. The format is described in README.md next to this file.
import { createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Transform } from 'node:stream';

/** Exit codes of the kit; README.md lists them. 8-11 and 130 are the point-in-time restores' (`pitr`, `mysql-pitr`). */
export const EXIT = { usage: 2, wrongKey: 3, damaged: 4, decompress: 5, io: 6, partial: 7, target: 8, missingWal: 9, server: 10, tools: 11, interrupted: 130 };

/** An error the kit reports as one line with its exit code. */
export class KitError extends Error {
  constructor(exitCode, message) {
    super(message);
    this.exitCode = exitCode;
  }
}

export const MAGIC = Buffer.from('HFENC', 'ascii');
export const HEADER_LENGTH = 62;
export const TAG_LENGTH = 16;
const MIN_CHUNK = 16;
const MAX_CHUNK = 16 * 1024 * 1024;

function parseKey(text, origin) {
  const value = text
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith('#'))
    .join('')
    .trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64');
    if (key.length === 32) return key;
  }
  throw new KitError(EXIT.usage, `the key in ${origin} is not 64 hex characters or the base64 form of 32 bytes`);
}

/** The profile key from --key-file, else from HOLDFAST_KEY. */
export function readKey(keyFile) {
  if (keyFile) {
    let text;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (error) {
      throw new KitError(EXIT.io, `cannot read key file ${keyFile}: ${error.code ?? error.message}`);
    }
    return parseKey(text, `key file ${keyFile}`);
  }
  if (process.env.HOLDFAST_KEY) return parseKey(process.env.HOLDFAST_KEY, 'HOLDFAST_KEY');
  throw new KitError(EXIT.usage, 'no key given: pass --key-file <path> or set HOLDFAST_KEY');
}

/** The first bytes of an age v1 file (`age-encryption.org/v1`), as many as the HFENC magic has. */
const AGE_START = Buffer.from('age-e', 'ascii');

function fingerprintOf(key) {
  return createHmac('sha256', key).update('holdfast key fingerprint').digest().subarray(0, 16);
}

/** Checks what is there of a header so far (magic, then version), so a non-HFENC input fails on its first bytes. */
export function checkHeaderStart(headerBytes) {
  const n = Math.min(headerBytes.length, MAGIC.length);
  if (!headerBytes.subarray(0, n).equals(MAGIC.subarray(0, n))) {
    // A public-key profile's backup is an age file: name the tool that opens it rather than calling it damaged.
    if (n === MAGIC.length && headerBytes.subarray(0, n).equals(AGE_START)) {
      throw new KitError(EXIT.damaged, 'not a Holdfast encrypted file: this is an age file (a backup of a public-key profile); decrypt it with: age -d -i key.txt <file>');
    }
    throw new KitError(EXIT.damaged, 'not a Holdfast encrypted file');
  }
  if (headerBytes.length > 5 && headerBytes[5] !== 1) {
    throw new KitError(EXIT.damaged, `unsupported format version ${headerBytes[5]} (this script reads version 1)`);
  }
}

/** Validates a complete 62-byte header against the key and derives what opening records needs. */
export function openHeader(headerBytes, profileKey) {
  checkHeaderStart(headerBytes);
  const chunkSize = headerBytes.readUInt32BE(6);
  if (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK) {
    throw new KitError(EXIT.damaged, `corrupt header: chunk size ${chunkSize} out of range`);
  }
  const expected = headerBytes.subarray(46, 62);
  const given = fingerprintOf(profileKey);
  if (!given.equals(expected)) {
    throw new KitError(
      EXIT.wrongKey,
      `wrong key: this backup needs the key with fingerprint ${expected.toString('hex')}, ` +
        `the given key has fingerprint ${given.toString('hex')}`,
    );
  }
  const salt = headerBytes.subarray(10, 42);
  const dataKey = Buffer.from(hkdfSync('sha256', profileKey, salt, Buffer.from('holdfast-enc v1 data key'), 32));
  return { headerBytes: Buffer.from(headerBytes), chunkSize, dataKey, noncePrefix: headerBytes.subarray(42, 46) };
}

function tryOpenRecord(header, index, record, isFinal) {
  const nonce = Buffer.alloc(12);
  header.noncePrefix.copy(nonce, 0);
  nonce.writeBigUInt64BE(index, 4);
  const aad = Buffer.alloc(HEADER_LENGTH + 9);
  header.headerBytes.copy(aad, 0);
  aad.writeBigUInt64BE(index, HEADER_LENGTH);
  aad[HEADER_LENGTH + 8] = isFinal ? 1 : 0;
  const decipher = createDecipheriv('aes-256-gcm', header.dataKey, nonce);
  decipher.setAAD(aad);
  decipher.setAuthTag(record.subarray(record.length - TAG_LENGTH));
  const body = decipher.update(record.subarray(0, record.length - TAG_LENGTH));
  try {
    return Buffer.concat([body, decipher.final()]);
  } catch {
    return undefined;
  }
}

/**
 * Opens record `index` (a bigint). Only after a failure is the other `final` value tried, to tell truncation and
 * appended data from damage; a record that fails both ways never gets through.
 */
export function openRecord(header, index, record, isFinal) {
  const plaintext = tryOpenRecord(header, index, record, isFinal);
  if (plaintext) return plaintext;
  if (tryOpenRecord(header, index, record, !isFinal)) {
    throw new KitError(EXIT.damaged, isFinal ? 'truncated: final chunk missing' : 'unexpected data after the final chunk');
  }
  throw new KitError(EXIT.damaged, `chunk ${index} failed authentication`);
}

/** The decrypting Transform: header, then records of chunkSize + 16 bytes; the last one ends at end of input. */
export function createDecrypter(profileKey) {
  let headerBytes = Buffer.alloc(0);
  let header;
  let record;
  let filled = 0;
  let index = 0n;
  const openNext = (bytes, isFinal) => {
    const plaintext = openRecord(header, index, bytes, isFinal);
    index += 1n;
    return plaintext;
  };

  return new Transform({
    transform(data, _encoding, callback) {
      try {
        let offset = 0;
        if (!header) {
          offset = Math.min(HEADER_LENGTH - headerBytes.length, data.length);
          headerBytes = Buffer.concat([headerBytes, data.subarray(0, offset)]);
          checkHeaderStart(headerBytes);
          if (headerBytes.length < HEADER_LENGTH) return callback();
          header = openHeader(headerBytes, profileKey);
          record = Buffer.alloc(header.chunkSize + TAG_LENGTH);
        }
        while (offset < data.length) {
          if (filled === record.length) {
            this.push(openNext(record, false));
            filled = 0;
          }
          const copied = data.copy(record, filled, offset, offset + record.length - filled);
          filled += copied;
          offset += copied;
        }
        callback();
      } catch (error) {
        callback(error);
      }
    },
    flush(callback) {
      try {
        if (!header) {
          checkHeaderStart(headerBytes);
          throw new KitError(EXIT.damaged, headerBytes.length < MAGIC.length ? 'not a Holdfast encrypted file' : 'truncated: header incomplete');
        }
        if (filled === 0) throw new KitError(EXIT.damaged, 'truncated: final chunk missing');
        if (filled < TAG_LENGTH) throw new KitError(EXIT.damaged, `truncated: chunk ${index} is incomplete`);
        this.push(openNext(record.subarray(0, filled), true));
        callback();
      } catch (error) {
        callback(error);
      }
    },
  });
}

/**
 * Random access to the plaintext of an HFENC file. Every record except the last is chunkSize + 16 bytes, so the
 * plaintext byte p lives in record floor(p / chunkSize), which starts at 62 + i * (chunkSize + 16). Each record is
 * authenticated with its index and final flag, so records read out of order are as safe as a full pass; the last
 * record (opened when the tail is read) proves the file is not cut short. One decrypted record is kept, because
 * neighbouring members usually share it.
 */
export class EncryptedFileReader {
  /** Checks the header and the key, then opens the last record at once: a file cut short or extended fails here. */
  static async open(handle, fileSize, profileKey, label) {
    return naming(label, async () => {
      const headerBytes = Buffer.alloc(Math.min(HEADER_LENGTH, fileSize));
      await readExactly(handle, headerBytes, 0);
      checkHeaderStart(headerBytes);
      if (headerBytes.length < HEADER_LENGTH) throw new KitError(EXIT.damaged, 'truncated: header incomplete');
      const reader = new EncryptedFileReader(handle, fileSize, openHeader(headerBytes, profileKey), label);
      await reader.record(reader.recordCount - 1);
      return reader;
    });
  }

  constructor(handle, fileSize, header, label) {
    this.handle = handle;
    this.header = header;
    this.label = label;
    const recordSize = header.chunkSize + TAG_LENGTH;
    const body = fileSize - HEADER_LENGTH;
    if (body === 0) throw new KitError(EXIT.damaged, 'truncated: final chunk missing');
    this.recordSize = recordSize;
    this.recordCount = Math.ceil(body / recordSize);
    const lastLength = body - (this.recordCount - 1) * recordSize;
    if (lastLength < TAG_LENGTH) throw new KitError(EXIT.damaged, `truncated: chunk ${this.recordCount - 1} is incomplete`);
    this.lastRecordLength = lastLength;
    /** Plaintext size. */
    this.size = (this.recordCount - 1) * header.chunkSize + lastLength - TAG_LENGTH;
    this.cached = { index: -1, plaintext: undefined };
  }

  async record(index) {
    if (this.cached.index === index) return this.cached.plaintext;
    const start = HEADER_LENGTH + index * this.recordSize;
    const isFinal = index === this.recordCount - 1;
    const bytes = Buffer.alloc(isFinal ? this.lastRecordLength : this.recordSize);
    await readExactly(this.handle, bytes, start);
    const plaintext = await naming(this.label, () => openRecord(this.header, BigInt(index), bytes, isFinal));
    this.cached = { index, plaintext };
    return plaintext;
  }

  /** Plaintext bytes start..end-1, one record's slice at a time. */
  async *range(start, end) {
    const { chunkSize } = this.header;
    for (let position = start; position < end; ) {
      const index = Math.floor(position / chunkSize);
      const plaintext = await this.record(index);
      const from = position - index * chunkSize;
      const to = Math.min(plaintext.length, end - index * chunkSize);
      yield Buffer.from(plaintext.subarray(from, to));
      position += to - from;
    }
  }
}

/** Runs `operation`, putting the file's name in front of a kit error: with a chain, several files are read. */
export async function naming(label, operation) {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof KitError && label && !error.message.startsWith(label)) error.message = `${label}: ${error.message}`;
    throw error;
  }
}

/** Fills `buffer` from `position` of an open file, failing on a short file instead of returning fewer bytes. */
export async function readExactly(handle, buffer, position) {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) throw new KitError(EXIT.damaged, `unexpected end of file at byte ${position + filled}`);
    filled += bytesRead;
  }
}
