import { describe, expect, it } from 'vitest';
import { createDecryptStream } from '../../src/codec/encryption/decrypt-stream.js';
import { createDeterministicEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';
import { deriveDataKey, keyFingerprint } from '../../src/codec/encryption/format.js';
import { readVectors, runThrough } from './helpers.js';

const document = await readVectors();
const key = Buffer.from(document.profileKeyHex, 'hex');
const salt = Buffer.from(document.saltHex, 'hex');
const noncePrefix = Buffer.from(document.noncePrefixHex, 'hex');

describe('encryption test vectors of docs/formats/encryption.md', () => {
  it('covers the empty plaintext, exactly one chunk and one chunk plus one byte', () => {
    const lengths = document.vectors.map((vector) => Buffer.byteLength(vector.plaintext));
    expect(lengths).toEqual(expect.arrayContaining([0, document.chunkSize, document.chunkSize + 1]));
  });

  it('derives the documented key fingerprint and data key', () => {
    expect(keyFingerprint(key).toString('hex')).toBe(document.keyFingerprintHex);
    expect(deriveDataKey(key, salt).toString('hex')).toBe(document.dataKeyHex);
  });

  for (const vector of document.vectors) {
    it(`encrypts "${vector.name}" to the documented bytes`, async () => {
      const stream = createDeterministicEncryptStream({ key, chunkSize: document.chunkSize }, { salt, noncePrefix });
      const output = await runThrough(stream, Buffer.from(vector.plaintext, 'utf8'), 5);
      expect(output.toString('hex')).toBe(vector.ciphertextHex);
    });

    it(`decrypts "${vector.name}" back to its plaintext`, async () => {
      const stream = createDecryptStream({ key });
      const output = await runThrough(stream, Buffer.from(vector.ciphertextHex, 'hex'), 3);
      expect(output.toString('utf8')).toBe(vector.plaintext);
      expect(stream.sidecarInfo).toEqual({
        formatVersion: 1,
        algorithm: 'AES-256-GCM',
        kdf: 'HKDF-SHA256',
        salt: salt.toString('base64'),
        noncePrefix: document.noncePrefixHex,
        chunkSize: document.chunkSize,
        keyFingerprint: document.keyFingerprintHex,
      });
    });
  }
});
