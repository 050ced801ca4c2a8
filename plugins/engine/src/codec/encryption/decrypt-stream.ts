import { createDecipheriv } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DecryptError } from './errors.js';
import {
  ENCRYPTION_MAGIC,
  HEADER_LENGTH,
  TAG_LENGTH,
  assertProfileKey,
  chunkAad,
  checkHeaderPrefix,
  chunkNonce,
  decodeHeader,
  deriveDataKey,
  keyFingerprint,
  toSidecarInfo,
  type EncryptionHeader,
  type EncryptionSidecarInfo,
} from './format.js';

/** Options of {@link createDecryptStream}. */
export interface DecryptStreamOptions {
  /** The 32-byte profile key the backup was encrypted with. */
  key: Uint8Array;
}

/** What a parsed header gives a decryption: the key to open records and the bytes they authenticate. */
interface OpenedHeader {
  header: EncryptionHeader;
  headerBytes: Buffer;
  dataKey: Buffer;
  record: Buffer;
}

/**
 * HFENC file in, plaintext out. Emits `header` (sidecar form) once the header is read and checked against the key.
 * Plaintext of a chunk is released only after its tag verified; at most one record is held at a time.
 */
export class DecryptStream extends Transform {
  private readonly profileKey: Buffer;
  private headerBuffer = Buffer.alloc(0);
  private opened: OpenedHeader | undefined;
  private recordLength = 0;
  private index = 0n;

  constructor(options: DecryptStreamOptions) {
    super();
    this.profileKey = assertProfileKey(options.key);
  }

  /** The header once it was read; undefined before. */
  get header(): EncryptionHeader | undefined {
    return this.opened?.header;
  }

  /** The header in sidecar form once it was read. */
  get sidecarInfo(): EncryptionSidecarInfo | undefined {
    return this.opened ? toSidecarInfo(this.opened.header) : undefined;
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      let offset = 0;
      if (!this.opened) {
        offset = this.readHeader(data);
        if (!this.opened) return callback();
      }
      const { record } = this.opened;
      while (offset < data.length) {
        // A full record followed by more bytes is, by the format, not the last one.
        if (this.recordLength === record.length) {
          this.push(this.openRecord(record, false));
          this.recordLength = 0;
        }
        const copied = data.copy(record, this.recordLength, offset, offset + record.length - this.recordLength);
        this.recordLength += copied;
        offset += copied;
      }
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (!this.opened) {
        // The input ended inside the header: say whether it is not ours at all or ours cut short.
        checkHeaderPrefix(this.headerBuffer);
        if (this.headerBuffer.length < ENCRYPTION_MAGIC.length) {
          throw new DecryptError('NOT_ENCRYPTED', 'not a Holdfast encrypted file');
        }
        throw new DecryptError('TRUNCATED', 'truncated: header incomplete');
      }
      if (this.recordLength === 0) throw new DecryptError('TRUNCATED', 'truncated: final chunk missing');
      if (this.recordLength < TAG_LENGTH) {
        throw new DecryptError('TRUNCATED', `truncated: chunk ${this.index} is incomplete`);
      }
      this.push(this.openRecord(this.opened.record.subarray(0, this.recordLength), true));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  /** Collects header bytes; returns how many bytes of `data` it consumed. */
  private readHeader(data: Buffer): number {
    const needed = HEADER_LENGTH - this.headerBuffer.length;
    this.headerBuffer = Buffer.concat([this.headerBuffer, data.subarray(0, needed)]);
    if (this.headerBuffer.length < HEADER_LENGTH) {
      checkHeaderPrefix(this.headerBuffer);
      return data.length;
    }
    const header = decodeHeader(this.headerBuffer);
    const expected = keyFingerprint(this.profileKey);
    if (!expected.equals(header.keyFingerprint)) {
      throw new DecryptError(
        'WRONG_KEY',
        `wrong key: this backup needs the key with fingerprint ${header.keyFingerprint.toString('hex')}, ` +
          `the given key has fingerprint ${expected.toString('hex')}`,
      );
    }
    this.opened = {
      header,
      headerBytes: this.headerBuffer,
      dataKey: deriveDataKey(this.profileKey, header.salt),
      record: Buffer.alloc(header.chunkSize + TAG_LENGTH),
    };
    this.emit('header', toSidecarInfo(header));
    return needed;
  }

  private openRecord(record: Buffer, isFinal: boolean): Buffer {
    const plaintext = this.tryOpen(record, isFinal);
    if (plaintext) {
      this.index += 1n;
      return plaintext;
    }
    // Only to word the error: a record that opens with the other flag tells truncation and appending apart.
    if (this.tryOpen(record, !isFinal)) {
      if (isFinal) throw new DecryptError('TRUNCATED', 'truncated: final chunk missing');
      throw new DecryptError('TRAILING_DATA', 'unexpected data after the final chunk');
    }
    throw new DecryptError('AUTH_FAILED', `chunk ${this.index} failed authentication`);
  }

  private tryOpen(record: Buffer, isFinal: boolean): Buffer | undefined {
    const opened = this.opened as OpenedHeader;
    const bodyLength = record.length - TAG_LENGTH;
    const decipher = createDecipheriv('aes-256-gcm', opened.dataKey, chunkNonce(opened.header.noncePrefix, this.index));
    decipher.setAAD(chunkAad(opened.headerBytes, this.index, isFinal));
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
}

/** Creates a Transform that decrypts a Holdfast encrypted backup with the profile key. */
export function createDecryptStream(options: DecryptStreamOptions): DecryptStream {
  return new DecryptStream(options);
}
