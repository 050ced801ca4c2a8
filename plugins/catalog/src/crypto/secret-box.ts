import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Version tag of the sealed-value format; a later format gets `v2:` and both stay readable. */
const FORMAT_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A value that could not be opened with the current system key (wrong key or tampered text). */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/** Short, non-reversible fingerprint of a key: the first 16 hex chars of SHA-256 over a label and the key. */
export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update('holdfast-system-key-fingerprint:').update(key).digest('hex').slice(0, 16);
}

/**
 * Encrypts every stored secret with the system key: AES-256-GCM, a random 12-byte IV per value, stored as
 * `v1:<key fingerprint>:<iv base64>:<ciphertext+tag base64>`. The fingerprint lets a wrong key fail with a clear
 * message instead of an authentication-tag error.
 */
export class SecretBox {
  readonly fingerprint: string;
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new SecretBoxError(`The system encryption key must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.key = Buffer.from(key);
    this.fingerprint = keyFingerprint(this.key);
  }

  /** Seals a UTF-8 string. */
  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT_VERSION}:${this.fingerprint}:${iv.toString('base64')}:${body.toString('base64')}`;
  }

  /** Seals a JSON value. */
  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }

  /** Opens a sealed string; throws {@link SecretBoxError} for a value sealed under another key or tampered. */
  open(sealed: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 4 || parts[0] !== FORMAT_VERSION) {
      throw new SecretBoxError('Stored secret is not in the v1 sealed format');
    }
    const [, fingerprint, ivText, bodyText] = parts as [string, string, string, string];
    if (!safeEqual(fingerprint, this.fingerprint)) {
      throw new SecretBoxError(
        `Stored secret was encrypted with a different system key (fingerprint ${fingerprint}, current key ${this.fingerprint})`,
      );
    }
    const iv = Buffer.from(ivText, 'base64');
    const body = Buffer.from(bodyText, 'base64');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretBoxError('Stored secret is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('Stored secret failed authentication: it was altered or sealed with another key');
    }
  }

  /** Opens a sealed JSON value. */
  openJson<T = unknown>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }

  /** True when `value` looks like something this format produced (any key). */
  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && /^v1:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/.test(value);
  }
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
