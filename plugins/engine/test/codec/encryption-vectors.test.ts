import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createDecryptStream } from '../../src/codec/encryption/decrypt-stream.js';
import { createDeterministicEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';
import { deriveDataKey, keyFingerprint } from '../../src/codec/encryption/format.js';
import { runThrough } from './helpers.js';

// The vectors are read from the format document itself, so the document and the code cannot drift apart.
interface VectorDocument {
  profileKeyHex: string;
  saltHex: string;
  noncePrefixHex: string;
  chunkSize: number;
  keyFingerprintHex: string;
  dataKeyHex: string;
  vectors: { name: string; plaintext: string; ciphertextHex: string }[];
}

async function readVectors(): Promise<VectorDocument> {
  const doc = await readFile(new URL('../../../../docs/formats/encryption.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Test vectors'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block?.[1]) throw new Error('docs/formats/encryption.md has no JSON block under "## Test vectors"');
  return JSON.parse(block[1]) as VectorDocument;
}

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
