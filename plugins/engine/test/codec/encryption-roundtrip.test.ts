import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDecryptStream } from '../../src/codec/encryption/decrypt-stream.js';
import { createEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';
import {
  DEFAULT_CHUNK_SIZE,
  HEADER_LENGTH,
  TAG_LENGTH,
  keyFingerprint,
  parseProfileKey,
} from '../../src/codec/encryption/format.js';
import { decrypt, encrypt, firstDifference, runThrough } from './helpers.js';

const key = randomBytes(32);

function expectedSize(plaintextLength: number, chunkSize: number): number {
  const records = Math.max(1, Math.ceil(plaintextLength / chunkSize));
  return HEADER_LENGTH + plaintextLength + records * TAG_LENGTH;
}

describe('encryption round trip', () => {
  const chunk = DEFAULT_CHUNK_SIZE;
  for (const size of [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 12_345]) {
    it(`restores ${size} bytes exactly, with the documented file size`, async () => {
      const plaintext = randomBytes(size);
      const file = await encrypt(key, plaintext);
      expect(file.length).toBe(expectedSize(size, chunk));
      expect(firstDifference(await decrypt(key, file), plaintext)).toBe('identical');
    });
  }

  it('streams several MiB written in uneven pieces, with a non-default chunk size', async () => {
    const plaintext = randomBytes(5 * 1024 * 1024 + 777);
    const file = await runThrough(createEncryptStream({ key, chunkSize: 100_000 }), plaintext, 65_521);
    expect(file.length).toBe(expectedSize(plaintext.length, 100_000));
    expect(firstDifference(await runThrough(createDecryptStream({ key }), file, 12_289), plaintext)).toBe('identical');
  });

  it('uses a fresh salt and nonce prefix for every backup', async () => {
    const plaintext = Buffer.from('same plaintext, same key');
    const first = createEncryptStream({ key });
    const second = createEncryptStream({ key });
    expect(first.header.salt.equals(second.header.salt)).toBe(false);
    const [a, b] = await Promise.all([runThrough(first, plaintext), runThrough(second, plaintext)]);
    expect(a.subarray(HEADER_LENGTH).equals(b.subarray(HEADER_LENGTH))).toBe(false);
  });

  it('exposes the header for the sidecar on both sides', async () => {
    const encryptStream = createEncryptStream({ key, chunkSize: 4096 });
    const info = encryptStream.sidecarInfo;
    expect(info).toMatchObject({ formatVersion: 1, algorithm: 'AES-256-GCM', kdf: 'HKDF-SHA256', chunkSize: 4096 });
    expect(Buffer.from(info.salt, 'base64')).toHaveLength(32);
    expect(info.noncePrefix).toMatch(/^[0-9a-f]{8}$/);
    expect(info.keyFingerprint).toBe(keyFingerprint(key).toString('hex'));
    expect(JSON.stringify(info)).not.toContain(key.toString('hex'));

    const file = await runThrough(encryptStream, randomBytes(10_000));
    const decryptStream = createDecryptStream({ key });
    const headers: unknown[] = [];
    decryptStream.on('header', (header: unknown) => headers.push(header));
    await runThrough(decryptStream, file);
    expect(headers).toEqual([info]);
  });
});

describe('encryption input checks', () => {
  it('rejects a key that is not 32 bytes, without echoing it', () => {
    expect(() => createEncryptStream({ key: randomBytes(16) })).toThrow('encryption key must be 32 bytes, got 16');
    expect(() => createDecryptStream({ key: 'not-a-buffer' as unknown as Buffer })).toThrow(/Buffer or Uint8Array/);
  });

  it('rejects chunk sizes outside 16 B .. 16 MiB', () => {
    expect(() => createEncryptStream({ key, chunkSize: 15 })).toThrow(/chunk size must be an integer from 16/);
    expect(() => createEncryptStream({ key, chunkSize: 16 * 1024 * 1024 + 1 })).toThrow(/got 16777217/);
    expect(() => createEncryptStream({ key, chunkSize: 1.5 })).toThrow(/got 1.5/);
  });

  it('reads profile keys as hex or base64 and names the expected forms otherwise', () => {
    expect(parseProfileKey(` ${key.toString('hex')}\n`)).toEqual(key);
    expect(parseProfileKey(key.toString('hex').toUpperCase())).toEqual(key);
    expect(parseProfileKey(key.toString('base64'))).toEqual(key);
    expect(parseProfileKey(key.toString('base64url'))).toEqual(key);
    const wrong = key.toString('hex').slice(2);
    expect(() => parseProfileKey(wrong)).toThrow('encryption key must be 64 hex characters or the base64 form of 32 bytes');
    try {
      parseProfileKey(wrong);
    } catch (error) {
      expect((error as Error).message).not.toContain(wrong);
    }
  });
});
