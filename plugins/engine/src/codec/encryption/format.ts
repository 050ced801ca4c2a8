import { hkdfSync } from 'node:crypto';
import { encryptionKeyFingerprint } from '@holdfast/kernel';
import { DecryptError } from './errors.js';

// The byte layout below is specified in docs/formats/encryption.md; change both together, and bump the version.

/** ASCII `HFENC`: the first bytes of every Holdfast encrypted file. */
export const ENCRYPTION_MAGIC = Buffer.from('HFENC', 'ascii');
/** Version of the encrypted file format this code writes and reads. */
export const ENCRYPTION_FORMAT_VERSION = 1;
/** Bytes of the fixed header. */
export const HEADER_LENGTH = 62;
/** Plaintext bytes per chunk unless the caller chooses otherwise. */
export const DEFAULT_CHUNK_SIZE = 64 * 1024;
/** Smallest chunk size a header may declare. */
export const MIN_CHUNK_SIZE = 16;
/** Largest chunk size a header may declare: a decrypter holds one chunk, so this bounds its memory. */
export const MAX_CHUNK_SIZE = 16 * 1024 * 1024;
/** Bytes of the profile key and of the derived data key (AES-256). */
export const KEY_LENGTH = 32;
/** Bytes of the random HKDF salt stored in the header. */
export const SALT_LENGTH = 32;
/** Bytes of the random nonce prefix stored in the header. */
export const NONCE_PREFIX_LENGTH = 4;
/** Bytes of the key fingerprint stored in the header. */
export const FINGERPRINT_LENGTH = 16;
/** Bytes of a GCM authentication tag. */
export const TAG_LENGTH = 16;

const DATA_KEY_INFO = Buffer.from('holdfast-enc v1 data key', 'ascii');

/** Everything the header holds, decoded. */
export interface EncryptionHeader {
  formatVersion: number;
  chunkSize: number;
  salt: Buffer;
  noncePrefix: Buffer;
  keyFingerprint: Buffer;
}

/** The header in the readable form written into the backup's `.meta.json` sidecar under `encryption`. */
export interface EncryptionSidecarInfo {
  formatVersion: number;
  algorithm: 'AES-256-GCM';
  kdf: 'HKDF-SHA256';
  /** 32 bytes, base64. */
  salt: string;
  /** 4 bytes, hex. */
  noncePrefix: string;
  chunkSize: number;
  /** 16 bytes, hex: identifies the profile key without revealing it. */
  keyFingerprint: string;
}

/** Checks that a profile key is 32 bytes and returns it as a Buffer (the caller keeps ownership). */
export function assertProfileKey(key: unknown): Buffer {
  if (!(key instanceof Uint8Array)) {
    throw new TypeError('encryption key must be a Buffer or Uint8Array of 32 bytes');
  }
  if (key.length !== KEY_LENGTH) {
    throw new RangeError(`encryption key must be ${KEY_LENGTH} bytes, got ${key.length}`);
  }
  return Buffer.isBuffer(key) ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
}

/** Checks a chunk size against the limits of the format. */
export function assertChunkSize(chunkSize: number): number {
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new RangeError(`chunk size must be an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE}, got ${chunkSize}`);
  }
  return chunkSize;
}

/**
 * Reads a profile key written as 64 hex characters or as base64 of 32 bytes (surrounding whitespace ignored).
 * The error never repeats the input, which may be a mistyped key.
 */
export function parseProfileKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) {
    const decoded = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
    if (decoded.length === KEY_LENGTH) return decoded;
  }
  throw new RangeError('encryption key must be 64 hex characters or the base64 form of 32 bytes');
}

/** First 16 bytes of HMAC-SHA256(key, "holdfast key fingerprint"): the kernel's one key fingerprint, as bytes. */
export function keyFingerprint(profileKey: Uint8Array): Buffer {
  return Buffer.from(encryptionKeyFingerprint(assertProfileKey(profileKey)), 'hex');
}

/** The per-backup AES-256 key: HKDF-SHA256(profile key, salt, "holdfast-enc v1 data key"). */
export function deriveDataKey(profileKey: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', profileKey, salt, DATA_KEY_INFO, KEY_LENGTH));
}

/** Serialises a header to its 62 bytes. */
export function encodeHeader(header: EncryptionHeader): Buffer {
  const bytes = Buffer.alloc(HEADER_LENGTH);
  ENCRYPTION_MAGIC.copy(bytes, 0);
  bytes.writeUInt8(header.formatVersion, 5);
  bytes.writeUInt32BE(header.chunkSize, 6);
  header.salt.copy(bytes, 10);
  header.noncePrefix.copy(bytes, 42);
  header.keyFingerprint.copy(bytes, 46);
  return bytes;
}

/**
 * Checks the bytes of a header seen so far (possibly fewer than 62): the magic and the version are judged as soon as
 * they are there, so a foreign file is named as such from its first bytes.
 */
export function checkHeaderPrefix(bytes: Buffer): void {
  const seen = Math.min(bytes.length, ENCRYPTION_MAGIC.length);
  if (!bytes.subarray(0, seen).equals(ENCRYPTION_MAGIC.subarray(0, seen))) {
    throw new DecryptError('NOT_ENCRYPTED', 'not a Holdfast encrypted file');
  }
  const version = bytes[ENCRYPTION_MAGIC.length];
  if (version !== undefined && version !== ENCRYPTION_FORMAT_VERSION) {
    throw new DecryptError('UNSUPPORTED_VERSION', `unsupported format version ${version}`);
  }
}

/** Parses a complete header; input that ended earlier is judged as foreign (< 5 bytes) or truncated. */
export function decodeHeader(bytes: Buffer): EncryptionHeader {
  checkHeaderPrefix(bytes);
  if (bytes.length < ENCRYPTION_MAGIC.length) throw new DecryptError('NOT_ENCRYPTED', 'not a Holdfast encrypted file');
  if (bytes.length < HEADER_LENGTH) throw new DecryptError('TRUNCATED', 'truncated: header incomplete');
  const chunkSize = bytes.readUInt32BE(6);
  if (chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new DecryptError('CORRUPT_HEADER', `corrupt header: chunk size ${chunkSize} out of range`);
  }
  return {
    formatVersion: ENCRYPTION_FORMAT_VERSION,
    chunkSize,
    salt: Buffer.from(bytes.subarray(10, 42)),
    noncePrefix: Buffer.from(bytes.subarray(42, 46)),
    keyFingerprint: Buffer.from(bytes.subarray(46, 62)),
  };
}

/** noncePrefix || uint64_be(index). */
export function chunkNonce(noncePrefix: Buffer, index: bigint): Buffer {
  const nonce = Buffer.alloc(NONCE_PREFIX_LENGTH + 8);
  noncePrefix.copy(nonce, 0);
  nonce.writeBigUInt64BE(index, NONCE_PREFIX_LENGTH);
  return nonce;
}

/** header || uint64_be(index) || final flag: binds each chunk to its file, its place and whether it is the last. */
export function chunkAad(headerBytes: Buffer, index: bigint, isFinal: boolean): Buffer {
  const aad = Buffer.alloc(HEADER_LENGTH + 9);
  headerBytes.copy(aad, 0);
  aad.writeBigUInt64BE(index, HEADER_LENGTH);
  aad.writeUInt8(isFinal ? 1 : 0, HEADER_LENGTH + 8);
  return aad;
}

/** The sidecar form of a header. */
export function toSidecarInfo(header: EncryptionHeader): EncryptionSidecarInfo {
  return {
    formatVersion: header.formatVersion,
    algorithm: 'AES-256-GCM',
    kdf: 'HKDF-SHA256',
    salt: header.salt.toString('base64'),
    noncePrefix: header.noncePrefix.toString('hex'),
    chunkSize: header.chunkSize,
    keyFingerprint: header.keyFingerprint.toString('hex'),
  };
}
