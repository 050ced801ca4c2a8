import { createCipheriv, createDecipheriv, createHmac, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { DecryptError } from '../encryption/errors.js';
import { publicKeyObject, rawPublicKey, type AgeIdentity, type AgeRecipient } from './age-keys.js';

// The age v1 file format (age-encryption.org/v1), X25519 recipients only, as docs/formats/encryption.md describes it.
// Implemented from the public specification with node:crypto (OpenSSL), so the payload runs at native speed.

/** The version line every age file starts with. */
export const AGE_VERSION_LINE = 'age-encryption.org/v1';
/** Plaintext bytes per payload chunk (fixed by the format). */
export const AGE_CHUNK_SIZE = 64 * 1024;
/** Bytes of a ChaCha20-Poly1305 tag. */
export const AGE_TAG_LENGTH = 16;
/** Bytes of the random payload nonce that follows the header. */
export const AGE_NONCE_LENGTH = 16;
/** A header longer than this is refused: it bounds what a decrypter holds before the payload. */
export const AGE_MAX_HEADER_LENGTH = 64 * 1024;

const X25519_INFO = Buffer.from('age-encryption.org/v1/X25519', 'ascii');
const ZERO_NONCE = Buffer.alloc(12);
const FILE_KEY_LENGTH = 16;
const BODY_COLUMNS = 64;

/** Base64 without padding, as every age header field is written. */
export function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

/** Strict unpadded base64: anything that does not re-encode to the same text is refused. */
function unb64(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]*$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return b64(bytes) === text ? bytes : null;
}

function hkdf(ikm: Buffer, salt: Buffer, info: string | Buffer, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, typeof info === 'string' ? Buffer.from(info, 'ascii') : info, length));
}

/** Ciphertext and tag as separate pieces: the caller joins a whole input piece's chunks in one copy. */
function sealParts(key: Buffer, nonce: Buffer, plaintext: Buffer): Buffer[] {
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: AGE_TAG_LENGTH });
  const body = cipher.update(plaintext);
  const rest = cipher.final(); // empty for ChaCha20-Poly1305; kept so no byte could ever be dropped
  return rest.length > 0 ? [body, rest, cipher.getAuthTag()] : [body, cipher.getAuthTag()];
}

/** The plaintext, or null when the tag does not verify. */
function open(key: Buffer, nonce: Buffer, sealed: Buffer): Buffer | null {
  if (sealed.length < AGE_TAG_LENGTH) return null;
  const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: AGE_TAG_LENGTH });
  decipher.setAuthTag(sealed.subarray(sealed.length - AGE_TAG_LENGTH));
  try {
    const body = decipher.update(sealed.subarray(0, sealed.length - AGE_TAG_LENGTH));
    const rest = decipher.final(); // empty for ChaCha20-Poly1305; kept so no byte could ever be dropped
    return rest.length > 0 ? Buffer.concat([body, rest]) : body;
  } catch {
    return null;
  }
}

function wrapBodyLines(body: Buffer): string {
  const text = b64(body);
  const lines: string[] = [];
  for (let offset = 0; offset <= text.length; offset += BODY_COLUMNS) lines.push(text.slice(offset, offset + BODY_COLUMNS));
  // A body whose last line is full is followed by an empty line, so a reader always sees a short last line.
  return lines.join('\n');
}

/** The file key of a new file, and the header bytes (ending in the MAC line) that carry it to one recipient. */
export function sealAgeHeader(recipient: AgeRecipient): { fileKey: Buffer; header: Buffer } {
  const fileKey = randomBytes(FILE_KEY_LENGTH);
  const ephemeral = generateKeyPairSync('x25519');
  const share = rawPublicKey(ephemeral.publicKey);
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: publicKeyObject(recipient.publicKey) });
  const wrapKey = hkdf(shared, Buffer.concat([share, recipient.publicKey]), X25519_INFO);
  const body = Buffer.concat(sealParts(wrapKey, ZERO_NONCE, fileKey));
  const withoutMac = `${AGE_VERSION_LINE}\n-> X25519 ${b64(share)}\n${wrapBodyLines(body)}\n---`;
  const mac = createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header')).update(withoutMac, 'ascii').digest();
  return { fileKey, header: Buffer.from(`${withoutMac} ${b64(mac)}\n`, 'ascii') };
}

/** One recipient stanza of a header. */
interface Stanza {
  type: string;
  args: string[];
  body: Buffer;
}

/**
 * Where the header ends in the bytes seen so far: the index after the MAC line's newline, or -1 when more bytes are
 * needed. Refuses early what is not an age file, so a foreign file is named as such from its first bytes.
 */
export function findAgeHeaderEnd(bytes: Buffer): number {
  const first = `${AGE_VERSION_LINE}\n`;
  const seen = Math.min(bytes.length, first.length);
  if (bytes.subarray(0, seen).toString('latin1') !== first.slice(0, seen)) {
    throw new DecryptError('NOT_ENCRYPTED', 'not an age encrypted file (age-encryption.org/v1)');
  }
  let lineStart = 0;
  while (lineStart < bytes.length) {
    const newline = bytes.indexOf(0x0a, lineStart);
    if (newline < 0) break;
    if (bytes.subarray(lineStart, lineStart + 4).toString('latin1') === '--- ') return newline + 1;
    lineStart = newline + 1;
  }
  if (bytes.length > AGE_MAX_HEADER_LENGTH) throw new DecryptError('CORRUPT_HEADER', 'corrupt header: longer than 64 KiB');
  return -1;
}

function parseHeader(header: Buffer): { stanzas: Stanza[]; withoutMac: string; mac: Buffer } {
  const corrupt = (why: string) => new DecryptError('CORRUPT_HEADER', `corrupt age header: ${why}`);
  const text = header.toString('latin1');
  const lines = text.slice(0, -1).split('\n');
  const stanzas: Stanza[] = [];
  let index = 1;
  while (index < lines.length && lines[index]!.startsWith('-> ')) {
    const [type, ...args] = lines[index]!.slice(3).split(' ');
    if (!type || args.some((arg) => arg === '')) throw corrupt('malformed stanza line');
    index += 1;
    let bodyText = '';
    for (;;) {
      const line = lines[index];
      if (line === undefined) throw corrupt('stanza body does not end');
      index += 1;
      if (line.length > BODY_COLUMNS) throw corrupt('stanza body line longer than 64 columns');
      bodyText += line;
      if (line.length < BODY_COLUMNS) break;
    }
    const body = unb64(bodyText);
    if (!body) throw corrupt('stanza body is not canonical base64');
    stanzas.push({ type, args, body });
  }
  const macLine = lines[index];
  if (index !== lines.length - 1 || !macLine?.startsWith('--- ')) throw corrupt('unexpected line before the MAC');
  if (stanzas.length === 0) throw corrupt('no recipient stanza');
  const mac = unb64(macLine.slice(4));
  if (!mac || mac.length !== 32) throw corrupt('malformed MAC');
  return { stanzas, withoutMac: text.slice(0, text.length - 1 - (macLine.length - 3)), mac };
}

/**
 * The file key of a complete header (as {@link findAgeHeaderEnd} cut it), opened with the identity.
 * WRONG_KEY when no X25519 stanza is for this identity; CORRUPT_HEADER when the MAC does not verify.
 */
export function openAgeHeader(header: Buffer, identity: AgeIdentity): Buffer {
  const { stanzas, withoutMac, mac } = parseHeader(header);
  let fileKey: Buffer | null = null;
  for (const stanza of stanzas) {
    if (stanza.type !== 'X25519') continue;
    const share = stanza.args.length === 1 ? unb64(stanza.args[0]!) : null;
    if (!share || share.length !== 32 || stanza.body.length !== FILE_KEY_LENGTH + AGE_TAG_LENGTH) {
      throw new DecryptError('CORRUPT_HEADER', 'corrupt age header: malformed X25519 stanza');
    }
    let shared: Buffer;
    try {
      shared = diffieHellman({ privateKey: identity.privateKey, publicKey: publicKeyObject(share) });
    } catch {
      throw new DecryptError('CORRUPT_HEADER', 'corrupt age header: X25519 share is not a valid point');
    }
    if (shared.every((byte) => byte === 0)) throw new DecryptError('CORRUPT_HEADER', 'corrupt age header: low-order X25519 share');
    const wrapKey = hkdf(shared, Buffer.concat([share, identity.publicKey]), X25519_INFO);
    fileKey = open(wrapKey, ZERO_NONCE, stanza.body);
    if (fileKey) break;
  }
  if (!fileKey) {
    throw new DecryptError('WRONG_KEY', 'wrong key: the private key given is not one this backup was encrypted to');
  }
  const expected = createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header')).update(withoutMac, 'latin1').digest();
  if (!timingSafeEqual(expected, mac)) throw new DecryptError('CORRUPT_HEADER', 'corrupt age header: the header MAC does not verify');
  return fileKey;
}

/** The payload key: HKDF-SHA256(file key, payload nonce, "payload"). */
export function payloadKey(fileKey: Buffer, nonce: Buffer): Buffer {
  return hkdf(fileKey, nonce, 'payload');
}

/** The STREAM nonce of chunk `index`: an 11-byte big-endian counter, then 01 for the last chunk, 00 otherwise. */
export function chunkNonce(index: bigint, isLast: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(index, 3);
  nonce[11] = isLast ? 1 : 0;
  return nonce;
}

export { open as openChunk, sealParts as sealChunk };
