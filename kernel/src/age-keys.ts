import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { bech32Decode, bech32Encode } from './age-bech32.js';

// Key strings of the age format (age-encryption.org/v1): an X25519 recipient is `age1` + bech32 of the 32-byte public
// key; an identity is `AGE-SECRET-KEY-1` + upper-case bech32 of the 32-byte private scalar.

const RECIPIENT_PREFIX = 'age';
const IDENTITY_PREFIX = 'age-secret-key-';

/** A parsed X25519 recipient: the public key Holdfast encrypts to. */
export interface AgeRecipient {
  /** The canonical `age1...` string. */
  text: string;
  publicKey: Buffer;
}

/** A parsed X25519 identity: the private key, only ever held for one restore or download. */
export interface AgeIdentity {
  privateKey: KeyObject;
  /** Raw 32-byte public key of this identity (what its recipient encodes). */
  publicKey: Buffer;
}

/** A bad key string; the message names what is wrong and never repeats the text (it may be a private key). */
export class AgeKeyError extends Error {
  override readonly name = 'AgeKeyError';
}

function jwkOf(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** The raw 32-byte public key of an X25519 key object. */
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
}

/** An X25519 public key object from its 32 raw bytes. */
export function publicKeyObject(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: jwkOf(raw) }, format: 'jwk' });
}

/** Parses an `age1...` X25519 recipient (surrounding whitespace ignored). */
export function parseAgeRecipient(text: string): AgeRecipient {
  const trimmed = text.trim();
  const decoded = bech32Decode(trimmed);
  if (!decoded || decoded.prefix !== RECIPIENT_PREFIX || trimmed !== trimmed.toLowerCase()) {
    throw new AgeKeyError('must be an age X25519 recipient (a public key starting with "age1", as age-keygen prints it)');
  }
  if (decoded.bytes.length !== 32) throw new AgeKeyError('must be an age X25519 recipient of 32 bytes');
  try {
    publicKeyObject(decoded.bytes);
  } catch {
    throw new AgeKeyError('is not a usable X25519 public key');
  }
  return { text: trimmed, publicKey: decoded.bytes };
}

/**
 * Parses an age identity: `AGE-SECRET-KEY-1...`, alone or inside an age-keygen key file (comment lines starting
 * with `#` and blank lines ignored; the first identity line is used).
 */
export function parseAgeIdentity(text: string): AgeIdentity {
  const line = text
    .split(/\r?\n/)
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate !== '' && !candidate.startsWith('#'));
  const decoded = line ? bech32Decode(line) : null;
  if (!decoded || decoded.prefix !== IDENTITY_PREFIX || line !== line!.toUpperCase()) {
    throw new AgeKeyError('must be an age X25519 identity (a private key starting with "AGE-SECRET-KEY-1", as age-keygen writes it)');
  }
  if (decoded.bytes.length !== 32) throw new AgeKeyError('must be an age X25519 identity of 32 bytes');
  const privateKey = privateKeyObject(decoded.bytes);
  return { privateKey, publicKey: rawPublicKey(privateKey) };
}

// PKCS#8 DER of an X25519 private key, up to the 32 raw bytes (RFC 8410): the one raw import Node offers.
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

function privateKeyObject(scalar: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, scalar]), format: 'der', type: 'pkcs8' });
}

/** The `age1...` recipient string of a raw public key. */
export function formatAgeRecipient(publicKey: Buffer): string {
  return bech32Encode(RECIPIENT_PREFIX, publicKey);
}

/** A new key pair as age-keygen would print it (tests, and the CLI's key generation). */
export function generateAgeIdentity(): { identity: string; recipient: string } {
  const { privateKey } = generateKeyPairSync('x25519');
  const scalar = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return {
    identity: bech32Encode(IDENTITY_PREFIX, scalar).toUpperCase(),
    recipient: formatAgeRecipient(rawPublicKey(privateKey)),
  };
}
