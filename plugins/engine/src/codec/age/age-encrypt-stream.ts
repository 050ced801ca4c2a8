import { randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AGE_CHUNK_SIZE, AGE_NONCE_LENGTH, chunkNonce, payloadKey, sealAgeHeader, sealChunk } from './age-format.js';
import { encryptionKeyFingerprint } from '@holdfast/kernel';
import { parseAgeRecipient, type AgeRecipient } from './age-keys.js';

/** What the sidecar of an age-encrypted backup says about it (nothing secret: the recipient is a public key). */
export interface AgeSidecarInfo {
  format: 'age';
  formatVersion: 1;
  algorithm: 'X25519 + ChaCha20-Poly1305';
  /** The `age1...` recipient the backup was encrypted to. */
  recipient: string;
  /** 32 hex: the Holdfast key fingerprint of the 32-byte public key, as the vault shows it for the profile. */
  keyFingerprint: string;
}

/**
 * Plaintext in, an age v1 file to one X25519 recipient out. Holds at most one 64 KiB chunk: a full chunk is sealed as
 * "not last" only once more input shows it is not the end. Backpressure is the Transform's own.
 */
export class AgeEncryptStream extends Transform {
  private readonly recipient: AgeRecipient;
  private readonly preamble: Buffer;
  private readonly key: Buffer;
  private readonly pending = Buffer.alloc(AGE_CHUNK_SIZE);
  private pendingLength = 0;
  private index = 0n;
  private isPreambleSent = false;

  constructor(recipient: string | AgeRecipient) {
    super();
    this.recipient = typeof recipient === 'string' ? parseAgeRecipient(recipient) : recipient;
    const { fileKey, header } = sealAgeHeader(this.recipient);
    const nonce = randomBytes(AGE_NONCE_LENGTH);
    this.key = payloadKey(fileKey, nonce);
    this.preamble = Buffer.concat([header, nonce]);
  }

  get sidecarInfo(): AgeSidecarInfo {
    return {
      format: 'age',
      formatVersion: 1,
      algorithm: 'X25519 + ChaCha20-Poly1305',
      recipient: this.recipient.text,
      keyFingerprint: encryptionKeyFingerprint(this.recipient.publicKey),
    };
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      const out: Buffer[] = this.takePreamble();
      let offset = 0;
      while (offset < data.length) {
        if (this.pendingLength === AGE_CHUNK_SIZE) {
          out.push(...this.seal(this.pending, false));
          this.pendingLength = 0;
        }
        const copied = data.copy(this.pending, this.pendingLength, offset, offset + AGE_CHUNK_SIZE - this.pendingLength);
        this.pendingLength += copied;
        offset += copied;
      }
      // One output piece per input piece: many small pushes cost more downstream than one concat.
      if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      // Always a last chunk, empty only when the whole plaintext is: its flag proves the file is complete.
      this.push(Buffer.concat([...this.takePreamble(), ...this.seal(this.pending.subarray(0, this.pendingLength), true)]));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private takePreamble(): Buffer[] {
    if (this.isPreambleSent) return [];
    this.isPreambleSent = true;
    return [this.preamble];
  }

  private seal(plaintext: Buffer, isLast: boolean): Buffer[] {
    const sealed = sealChunk(this.key, chunkNonce(this.index, isLast), plaintext);
    this.index += 1n;
    return sealed;
  }
}

/** A Transform that encrypts to the `age1...` recipient; throws AgeKeyError for a bad recipient. */
export function createAgeEncryptStream(recipient: string): AgeEncryptStream {
  return new AgeEncryptStream(recipient);
}
