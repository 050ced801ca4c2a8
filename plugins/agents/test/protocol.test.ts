import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { enrollmentTokenHash, enrollmentTtlFromEnv, newEnrollmentToken } from '../src/enrollment-token.js';
import { ed25519PublicKey, rawPublicKey, signedChallenge, verifySignature } from '../src/protocol.js';

describe('agent protocol helpers', () => {
  it('verifies a signature of the challenge by the same key only, for the same subject and nonce only', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const stored = ed25519PublicKey(rawPublicKey(publicKey));
    const signature = sign(null, signedChallenge('agent-1', 'nonce-a'), privateKey).toString('base64url');
    expect(verifySignature(stored, signedChallenge('agent-1', 'nonce-a'), signature)).toBe(true);
    expect(verifySignature(stored, signedChallenge('agent-1', 'nonce-b'), signature)).toBe(false);
    expect(verifySignature(stored, signedChallenge('agent-2', 'nonce-a'), signature)).toBe(false);
    expect(verifySignature(stored, signedChallenge('enroll', 'nonce-a'), signature)).toBe(false);
    expect(verifySignature(ed25519PublicKey(rawPublicKey(other.publicKey)), signedChallenge('agent-1', 'nonce-a'), signature)).toBe(false);
    expect(verifySignature(stored, signedChallenge('agent-1', 'nonce-a'), 'not-a-signature')).toBe(false);
  });

  it('accepts only a raw 32-byte Ed25519 public key', () => {
    expect(() => ed25519PublicKey(Buffer.alloc(31).toString('base64url'))).toThrow('32 bytes');
    expect(() => ed25519PublicKey(Buffer.alloc(33).toString('base64url'))).toThrow('32 bytes');
    const { publicKey } = generateKeyPairSync('ed25519');
    expect(rawPublicKey(ed25519PublicKey(rawPublicKey(publicKey)))).toBe(rawPublicKey(publicKey));
  });

  it('makes unguessable tokens, stores only their hash, and reads the lifetime from the environment', () => {
    const tokens = new Set(Array.from({ length: 100 }, () => newEnrollmentToken()));
    expect(tokens.size).toBe(100);
    const [token] = tokens;
    expect(enrollmentTokenHash(token!)).toMatch(/^[0-9a-f]{64}$/);
    expect(enrollmentTokenHash(token!)).not.toContain(token!.slice(11));
    expect(enrollmentTtlFromEnv({})).toBe(15 * 60_000);
    expect(enrollmentTtlFromEnv({ HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS: '60' })).toBe(60_000);
    for (const bad of ['0', '-5', '1.5', 'ten', '86401']) {
      expect(() => enrollmentTtlFromEnv({ HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS: bad })).toThrow('HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS');
    }
  });
});
