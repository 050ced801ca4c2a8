import { describe, expect, it } from 'vitest';
import { createSealKeyPair, openBundle, sealBundle, sealedBundle } from '../src/protocol.js';

const secret = { destinations: [{ configId: 'd1', secretAccessKey: 'very-secret' }], encryptionKey: 'a2V5' };

describe('sealed direct-upload bundles (issue 48 scope 3)', () => {
  it('opens with the connection key it was sealed to, for the same agent and call, and hides the secret', () => {
    const keys = createSealKeyPair();
    const sealed = sealBundle(keys.publicKey, 'agent-1', 7, secret);
    expect(sealedBundle.safeParse(sealed).success).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('very-secret');
    expect(openBundle(keys, 'agent-1', 7, sealed)).toEqual(secret);
    // A fresh server key per call: the same payload never seals to the same bytes.
    expect(sealBundle(keys.publicKey, 'agent-1', 7, secret).data).not.toBe(sealed.data);
  });

  it('refuses a tampered bundle, another call, another agent and another connection key', () => {
    const keys = createSealKeyPair();
    const sealed = sealBundle(keys.publicKey, 'agent-1', 7, secret);
    const flip = (text: string) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      return bytes.toString('base64url');
    };
    const refused = /do not open with this connection's key/;
    expect(() => openBundle(keys, 'agent-1', 7, { ...sealed, data: flip(sealed.data) })).toThrow(refused);
    expect(() => openBundle(keys, 'agent-1', 7, { ...sealed, tag: flip(sealed.tag) })).toThrow(refused);
    expect(() => openBundle(keys, 'agent-1', 7, { ...sealed, iv: flip(sealed.iv) })).toThrow(refused);
    expect(() => openBundle(keys, 'agent-1', 7, { ...sealed, tag: sealed.tag.slice(0, 8) })).toThrow(refused);
    expect(() => openBundle(keys, 'agent-1', 8, sealed)).toThrow(refused);
    expect(() => openBundle(keys, 'agent-2', 7, sealed)).toThrow(refused);
    expect(() => openBundle(createSealKeyPair(), 'agent-1', 7, sealed)).toThrow(refused);
    // Another sender key (a bundle re-sealed by someone without the server's key) does not open either.
    expect(() => openBundle(keys, 'agent-1', 7, { ...sealed, key: createSealKeyPair().publicKey })).toThrow(refused);
  });

  it('refuses a recipient key that is not 32 bytes', () => {
    expect(() => sealBundle(Buffer.alloc(16).toString('base64url'), 'agent-1', 1, secret)).toThrow(/32 bytes/);
  });
});
