import { Transform, type TransformCallback } from 'node:stream';
import { DecryptError } from '../encryption/errors.js';
import { AGE_CHUNK_SIZE, AGE_NONCE_LENGTH, AGE_TAG_LENGTH, chunkNonce, findAgeHeaderEnd, openAgeHeader, openChunk, payloadKey } from './age-format.js';
import { parseAgeIdentity, type AgeIdentity } from './age-keys.js';

const RECORD_LENGTH = AGE_CHUNK_SIZE + AGE_TAG_LENGTH;

/**
 * An age v1 file in, plaintext out, with one X25519 identity. The header is checked (recipient, MAC) before any
 * payload byte is released; a chunk's plaintext leaves only after its tag verified; at most one record is held.
 * Errors are DecryptError with the codes of the HFENC format (WRONG_KEY, TRUNCATED, AUTH_FAILED...).
 */
export class AgeDecryptStream extends Transform {
  private readonly identity: AgeIdentity;
  private head: Buffer = Buffer.alloc(0);
  private key: Buffer | undefined;
  private readonly record = Buffer.alloc(RECORD_LENGTH);
  private recordLength = 0;
  private index = 0n;

  constructor(identity: string | AgeIdentity) {
    super();
    this.identity = typeof identity === 'string' ? parseAgeIdentity(identity) : identity;
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      let input = data;
      if (!this.key) {
        input = this.readPreamble(data);
        if (!this.key) return callback();
      }
      const out: Buffer[] = [];
      let offset = 0;
      while (offset < input.length) {
        // A full record followed by more bytes is known not to be the last one.
        if (this.recordLength === RECORD_LENGTH) {
          out.push(this.openRecord(false));
        }
        const copied = input.copy(this.record, this.recordLength, offset, offset + RECORD_LENGTH - this.recordLength);
        this.recordLength += copied;
        offset += copied;
      }
      if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (!this.key) {
        findAgeHeaderEnd(this.head); // names a foreign file
        throw new DecryptError('TRUNCATED', 'truncated: age header incomplete');
      }
      if (this.recordLength === 0) throw new DecryptError('TRUNCATED', 'truncated: final chunk missing');
      const plaintext = this.openRecord(true);
      if (plaintext.length === 0 && this.index > 1n) throw new DecryptError('TRAILING_DATA', 'unexpected empty final chunk');
      this.push(plaintext);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  /** Collects header and payload nonce; once both are there, opens the file key and returns the bytes after them. */
  private readPreamble(data: Buffer): Buffer {
    this.head = this.head.length === 0 ? data : Buffer.concat([this.head, data]);
    const headerEnd = findAgeHeaderEnd(this.head);
    if (headerEnd < 0 || this.head.length < headerEnd + AGE_NONCE_LENGTH) return Buffer.alloc(0);
    const fileKey = openAgeHeader(this.head.subarray(0, headerEnd), this.identity);
    this.key = payloadKey(fileKey, this.head.subarray(headerEnd, headerEnd + AGE_NONCE_LENGTH));
    const rest = this.head.subarray(headerEnd + AGE_NONCE_LENGTH);
    this.head = Buffer.alloc(0);
    return rest;
  }

  private openRecord(isLast: boolean): Buffer {
    const sealed = this.record.subarray(0, this.recordLength);
    const chunk = this.index;
    const plaintext = openChunk(this.key!, chunkNonce(chunk, isLast), sealed);
    if (!plaintext) {
      // The other flag is tried only to word the error precisely; it never lets a bad chunk through.
      if (openChunk(this.key!, chunkNonce(chunk, !isLast), sealed)) {
        throw isLast
          ? new DecryptError('TRUNCATED', 'truncated: final chunk missing')
          : new DecryptError('TRAILING_DATA', 'unexpected data after the final chunk');
      }
      if (isLast && sealed.length < AGE_TAG_LENGTH) throw new DecryptError('TRUNCATED', `truncated: chunk ${chunk} is incomplete`);
      throw new DecryptError('AUTH_FAILED', `chunk ${chunk} failed authentication`);
    }
    // openChunk returns fresh memory, so the record buffer can be reused while this plaintext is downstream.
    this.recordLength = 0;
    this.index += 1n;
    return plaintext;
  }
}

/** A Transform that decrypts an age file with the identity text (`AGE-SECRET-KEY-1...` or a key file's content). */
export function createAgeDecryptStream(identity: string | AgeIdentity): AgeDecryptStream {
  return new AgeDecryptStream(identity);
}
