import { Transform, type TransformCallback } from 'node:stream';
import { DecryptError } from './errors.js';
import {
  ENCRYPTION_MAGIC,
  HEADER_LENGTH,
  TAG_LENGTH,
  assertProfileKey,
  checkHeaderPrefix,
  toSidecarInfo,
  type EncryptionHeader,
  type EncryptionSidecarInfo,
} from './format.js';
import { openHeader, openRecord, type OpenedHeader } from './open-record.js';

/** Options of {@link createDecryptStream}. */
export interface DecryptStreamOptions {
  /** The 32-byte profile key the backup was encrypted with. */
  key: Uint8Array;
}

/** A checked header and the buffer that collects one record at a time. */
interface DecryptionState extends OpenedHeader {
  record: Buffer;
}

/**
 * HFENC file in, plaintext out. Emits `header` (sidecar form) once the header is read and checked against the key.
 * Plaintext of a chunk is released only after its tag verified; at most one record is held at a time.
 */
export class DecryptStream extends Transform {
  private readonly profileKey: Buffer;
  private headerBuffer = Buffer.alloc(0);
  private opened: DecryptionState | undefined;
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
    const opened = openHeader(this.headerBuffer, this.profileKey);
    this.opened = { ...opened, record: Buffer.alloc(opened.header.chunkSize + TAG_LENGTH) };
    this.emit('header', toSidecarInfo(opened.header));
    return needed;
  }

  private openRecord(record: Buffer, isFinal: boolean): Buffer {
    const plaintext = openRecord(this.opened as DecryptionState, record, this.index, isFinal);
    this.index += 1n;
    return plaintext;
  }
}

/** Creates a Transform that decrypts a Holdfast encrypted backup with the profile key. */
export function createDecryptStream(options: DecryptStreamOptions): DecryptStream {
  return new DecryptStream(options);
}
