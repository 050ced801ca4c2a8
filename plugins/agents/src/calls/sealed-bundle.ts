/**
 * The secrets of one direct-upload call (issue 48 scope 3), sealed to the agent's connection key: the agent makes an
 * X25519 key pair for each connection (in memory only) and sends its public half in the hello; the server seals each
 * call's bundle with a fresh X25519 key of its own (ECDH), HKDF-SHA256 and AES-256-GCM. The call id and the agent id
 * are the additional data, so a bundle opens only for the call and agent it was made for. node:crypto only: the
 * agent side loads this through `@holdfast/agents/protocol`.
 */
import { createCipheriv, createDecipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { z } from 'zod';

const INFO = Buffer.from('holdfast-agent-seal-v1', 'utf8');

const base64url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');

/** A sealed bundle as it travels in a call frame. */
export const sealedBundle = z.strictObject({
  /** The server's one-time X25519 public key (raw 32 bytes). */
  key: base64url(64),
  iv: base64url(32),
  tag: base64url(32),
  data: base64url(1024 * 1024),
});
export type SealedBundle = z.infer<typeof sealedBundle>;

/** A connection's X25519 key pair: generated in memory, never written anywhere. */
export interface SealKeyPair {
  privateKey: KeyObject;
  /** Raw 32-byte public key, base64url (the hello's `sealKey`). */
  publicKey: string;
}

/** A fresh X25519 key pair for one agent connection. */
export function createSealKeyPair(): SealKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x?: string };
  return { privateKey, publicKey: jwk.x! };
}

function x25519PublicKey(raw: string): KeyObject {
  if (Buffer.from(raw, 'base64url').length !== 32) throw new Error('an X25519 public key is 32 bytes');
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: raw }, format: 'jwk' });
}

function aeadKey(shared: Buffer, senderKey: string, recipientKey: string): Buffer {
  // Both public keys are in the salt: the key is bound to this exact exchange.
  return Buffer.from(hkdfSync('sha256', shared, Buffer.from(`${senderKey}.${recipientKey}`, 'utf8'), INFO, 32));
}

function additionalData(agentId: string, callId: number): Buffer {
  return Buffer.from(`holdfast-agent-seal-v1\n${agentId}\n${callId}`, 'utf8');
}

/** Seals `payload` (JSON) to the agent's connection key `recipientKey` for call `callId` of agent `agentId`. */
export function sealBundle(recipientKey: string, agentId: string, callId: number, payload: unknown): SealedBundle {
  const recipient = x25519PublicKey(recipientKey);
  const ephemeral = createSealKeyPair();
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient });
  const key = aeadKey(shared, ephemeral.publicKey, recipientKey);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(agentId, callId));
  const data = Buffer.concat([cipher.update(Buffer.from(JSON.stringify(payload), 'utf8')), cipher.final()]);
  key.fill(0);
  return { key: ephemeral.publicKey, iv: iv.toString('base64url'), tag: cipher.getAuthTag().toString('base64url'), data: data.toString('base64url') };
}

/** Opens a bundle sealed to `own` for call `callId` of agent `agentId`; throws when anything was changed. */
export function openBundle(own: SealKeyPair, agentId: string, callId: number, sealed: SealedBundle): unknown {
  const shared = diffieHellman({ privateKey: own.privateKey, publicKey: x25519PublicKey(sealed.key) });
  const key = aeadKey(shared, sealed.key, own.publicKey);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64url'));
    decipher.setAAD(additionalData(agentId, callId));
    const tag = Buffer.from(sealed.tag, 'base64url');
    if (tag.length !== 16) throw new Error('short tag');
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64url')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as unknown;
  } catch {
    throw new Error('the sealed secrets of this call do not open with this connection\'s key (tampered with, or sealed for another call)');
  } finally {
    key.fill(0);
  }
}
