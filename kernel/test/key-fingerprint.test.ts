import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encryptionKeyFingerprint } from '../src/index.js';

describe('encryptionKeyFingerprint (docs/formats/encryption.md "Key fingerprint")', () => {
  it('is HMAC-SHA256(key, "holdfast key fingerprint") cut to 16 bytes, as 32 hex: the documented test vector', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, index) => index));
    expect(encryptionKeyFingerprint(key)).toBe('7f8f79f6bd9e574a7a2b1bfc7fcbe19b');
  });

  it('differs per key and is not the SHA-256 prefix the vault used to show (regression, issue 10.12)', () => {
    const key = Buffer.alloc(32, 7);
    expect(encryptionKeyFingerprint(key)).not.toBe(encryptionKeyFingerprint(Buffer.alloc(32, 8)));
    expect(encryptionKeyFingerprint(key).startsWith(createHash('sha256').update(key).digest('hex').slice(0, 16))).toBe(false);
  });
});
