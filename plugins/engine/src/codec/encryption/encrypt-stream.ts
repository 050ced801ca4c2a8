import { createCipheriv, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import {
  ENCRYPTION_FORMAT_VERSION,
  DEFAULT_CHUNK_SIZE,
  NONCE_PREFIX_LENGTH,
  SALT_LENGTH,
  assertChunkSize,
  assertProfileKey,
  chunkAad,
  chunkNonce,
  deriveDataKey,
  encodeHeader,
  keyFingerprint,
  toSidecarInfo,
  type EncryptionHeader,
  type EncryptionSidecarInfo,
} from './format.js';

/** Options of {@link createEncryptStream}. */
export interface EncryptStreamOptions {
  /** The 32-byte profile key. */
  key: Uint8Array;
  /** Plaintext bytes per chunk; default 64 KiB. */
  chunkSize?: number;
}

interface FixedRandomness {
  salt: Buffer;
  noncePrefix: Buffer;
}

/**
 * Plaintext in, HFENC file out (docs/formats/encryption.md). Holds at most one chunk of plaintext: the last full
 * chunk is kept back until more input shows it is not the final one. The records sealed from one input piece leave
 * as one output piece (about the input's size). Backpressure is the Transform's own.
 */
export class EncryptStream extends Transform {
  /** The header of the file being written, readable as soon as the stream exists. */
  readonly header: EncryptionHeader;
  private readonly headerBytes: Buffer;
  private readonly dataKey: Buffer;
  private readonly pending: Buffer;
  private pendingLength = 0;
  private index = 0n;
  private isHeaderSent = false;

  constructor(options: EncryptStreamOptions, randomness?: FixedRandomness) {
    super();
    const profileKey = assertProfileKey(options.key);
    const chunkSize = assertChunkSize(options.chunkSize ?? DEFAULT_CHUNK_SIZE);
    const salt = randomness?.salt ?? randomBytes(SALT_LENGTH);
    const noncePrefix = randomness?.noncePrefix ?? randomBytes(NONCE_PREFIX_LENGTH);
    if (salt.length !== SALT_LENGTH || noncePrefix.length !== NONCE_PREFIX_LENGTH) {
      throw new RangeError(`salt must be ${SALT_LENGTH} bytes and nonce prefix ${NONCE_PREFIX_LENGTH} bytes`);
    }
    this.header = {
      formatVersion: ENCRYPTION_FORMAT_VERSION,
      chunkSize,
      salt,
      noncePrefix,
      keyFingerprint: keyFingerprint(profileKey),
    };
    this.headerBytes = encodeHeader(this.header);
    this.dataKey = deriveDataKey(profileKey, salt);
    this.pending = Buffer.alloc(chunkSize);
  }

  /** The header in sidecar form (`encryption` of `.meta.json`). */
  get sidecarInfo(): EncryptionSidecarInfo {
    return toSidecarInfo(this.header);
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.sendHeaderOnce();
      const chunkSize = this.header.chunkSize;
      const sealed: Buffer[] = [];
      let offset = 0;
      while (offset < data.length) {
        // A full pending chunk followed by more input is known not to be the last one.
        if (this.pendingLength === chunkSize) {
          sealed.push(...this.seal(this.pending, false));
          this.pendingLength = 0;
        }
        const copied = data.copy(this.pending, this.pendingLength, offset, offset + chunkSize - this.pendingLength);
        this.pendingLength += copied;
        offset += copied;
      }
      // One piece per input piece, not two per 64 KiB record: every piece costs a hash update, a fan-out write and
      // a destination write downstream, and 16-byte tags on their own made an encrypted backup twice as slow.
      if (sealed.length > 0) this.push(sealed.length === 1 ? sealed[0] : Buffer.concat(sealed));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.sendHeaderOnce();
      // Always one final chunk, even for an empty plaintext: its flag is what proves the file is complete.
      this.push(Buffer.concat(this.seal(this.pending.subarray(0, this.pendingLength), true)));
      this.pendingLength = 0;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private sendHeaderOnce(): void {
    if (this.isHeaderSent) return;
    this.isHeaderSent = true;
    this.push(this.headerBytes);
  }

  private seal(plaintext: Buffer, isFinal: boolean): Buffer[] {
    const cipher = createCipheriv('aes-256-gcm', this.dataKey, chunkNonce(this.header.noncePrefix, this.index));
    cipher.setAAD(chunkAad(this.headerBytes, this.index, isFinal));
    const body = cipher.update(plaintext);
    const rest = cipher.final(); // empty for GCM; kept so no byte could ever be dropped
    this.index += 1n;
    return rest.length > 0 ? [body, rest, cipher.getAuthTag()] : [body, cipher.getAuthTag()];
  }
}

/** Creates a Transform that encrypts a backup with a fresh random salt and nonce prefix. */
export function createEncryptStream(options: EncryptStreamOptions): EncryptStream {
  return new EncryptStream(options);
}

/**
 * For test vectors only: fixes salt and nonce prefix so output is reproducible. Reusing them with the same key in
 * real backups would repeat the data key, so this is not exported from the package entry point.
 */
export function createDeterministicEncryptStream(
  options: EncryptStreamOptions,
  randomness: FixedRandomness,
): EncryptStream {
  return new EncryptStream(options, randomness);
}
