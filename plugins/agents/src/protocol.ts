/**
 * The agent connection protocol (docs/agents.md "Protocol"), shared by the server endpoint and the `holdfast agent`
 * command. Handshake frames are JSON text; after the hello, calls may also stream bytes in binary frames. This module imports only zod and node (crypto, stream) so the agent side
 * can load it without the server's ORM and HTTP stack (`@holdfast/agents/protocol`).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';

export * from './calls/call-frames.js';
export { CreditedReadable, CreditedSender } from './calls/credit-stream.js';
export * from './calls/sealed-bundle.js';
export * from './calls/direct-bundle.js';
export * from './calls/archive-parts.js';
export * from './connection/agent-health.js';
import { agentHealth } from './connection/agent-health.js';

/** Path of the WebSocket endpoint on the server's own HTTP listener. */
export const AGENT_CONNECT_PATH = '/api/agents/connect';

/** Protocol version the agent states in its first frame; the server refuses others with a clear close reason. */
export const AGENT_PROTOCOL_VERSION = 1;

/** Largest frame accepted before the handshake completes: every handshake frame fits in well under 1 KiB. */
export const HANDSHAKE_MAX_FRAME_BYTES = 4 * 1024;

/**
 * Largest frame accepted at all (ws `maxPayload`); larger frames close the socket with 1009. Data frames of a call's
 * byte stream carry up to {@link DATA_CHUNK_BYTES} (128 KiB) plus their tag; handshake frames stay limited to
 * {@link HANDSHAKE_MAX_FRAME_BYTES}.
 */
export const MAX_FRAME_BYTES = 256 * 1024;

/**
 * Close codes (4000-4999 are the application's range in RFC 6455). Codes in {@link PERMANENT_CLOSE_CODES} mean
 * "never retry with this identity"; the others are retried with backoff.
 */
export const CLOSE = {
  /** A frame that is not valid JSON, not a known message, binary, too big, or out of order. */
  protocolError: 4000,
  /** The enrollment token is unknown, used or expired. */
  enrollmentRefused: 4001,
  /** The signature does not verify against the stored key (or the key/agent is unknown). */
  authenticationFailed: 4002,
  /** The agent is disabled by an administrator; it may connect again once enabled. */
  disabled: 4003,
  /** The agent was revoked: it can never connect again. */
  revoked: 4004,
  /** The handshake did not complete in time. */
  handshakeTimeout: 4008,
  /** Another connection authenticated as the same agent; the older one is closed. */
  replaced: 4009,
  /** The agent speaks a protocol version this server does not. */
  unsupportedVersion: 4010,
  /** Too many connections are waiting in their handshake; try again later. */
  busy: 4013,
} as const;

/** Close codes after which the agent stops instead of reconnecting (its identity will not work again as it is). */
export const PERMANENT_CLOSE_CODES: ReadonlySet<number> = new Set([CLOSE.enrollmentRefused, CLOSE.revoked, CLOSE.unsupportedVersion]);

const base64url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');

/** First frame to enroll: the one-time token and the agent's new Ed25519 public key (raw 32 bytes, base64url). */
export const enrollFrame = z.strictObject({
  type: z.literal('enroll'),
  protocol: z.number().int(),
  token: z.string().min(1).max(128),
  publicKey: base64url(64),
});

/** First frame of every later connection: which agent this claims to be. */
export const authenticateFrame = z.strictObject({
  type: z.literal('authenticate'),
  protocol: z.number().int(),
  agentId: z.string().min(1).max(64),
});

/** The agent's answer to the challenge: an Ed25519 signature (base64url) of {@link signedChallenge}. */
export const signatureFrame = z.strictObject({
  type: z.literal('signature'),
  signature: base64url(128),
});

/** First frame after authentication: what this agent is and can do. */
export const helloFrame = z.strictObject({
  type: z.literal('hello'),
  version: z.string().min(1).max(64),
  host: z.string().min(1).max(255),
  adapters: z.array(z.string().min(1).max(128)).max(200),
  /**
   * What this agent answers beyond protocol 1's first calls: `scratch` (test restore scratch calls). Sent only to a
   * server whose welcome listed features (an older server refuses unknown hello fields).
   */
  features: z.array(z.string().min(1).max(32)).max(32).optional(),
  /** The agent's health (docs/agents.md "Agent health"); sent only to a server whose welcome listed `health`. */
  health: agentHealth.optional(),
  /**
   * Feature `direct` (direct uploads): this connection's X25519 public key (raw 32 bytes, base64url) the server seals
   * each direct call's secrets to, and the storage adapter packages the agent can upload with. Sent only to a server
   * whose welcome listed `direct`.
   */
  sealKey: base64url(64).optional(),
  storageAdapters: z.array(z.string().min(1).max(128)).max(200).optional(),
});

export type EnrollFrame = z.infer<typeof enrollFrame>;
export type AuthenticateFrame = z.infer<typeof authenticateFrame>;
export type HelloFrame = z.infer<typeof helloFrame>;

/** Server frames. */
export interface ChallengeFrame {
  type: 'challenge';
  nonce: string;
}
export interface WelcomeFrame {
  type: 'welcome';
  agentId: string;
  /** The server pings this often; an agent that hears nothing for twice this long may reconnect. */
  pingIntervalMs: number;
  /**
   * What this server accepts beyond protocol 1's first frames: `log` (the agent may forward its adapters' log lines).
   * An agent sends a newer frame only when the server listed it, so a newer agent works with an older server.
   */
  features?: string[];
}

/**
 * The bytes an agent signs: a fixed label (so a signature made for anything else never verifies here), the agent id
 * (or `enroll` while enrolling) and the server's random nonce.
 */
export function signedChallenge(subject: string, nonce: string): Buffer {
  return Buffer.from(`holdfast-agent-challenge-v1\n${subject}\n${nonce}`, 'utf8');
}

/** The public key of a raw 32-byte Ed25519 key in base64url; throws on anything else. */
export function ed25519PublicKey(rawBase64url: string): KeyObject {
  if (Buffer.from(rawBase64url, 'base64url').length !== 32) throw new Error('an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: rawBase64url }, format: 'jwk' });
}

/** True when `signature` (base64url) is a valid Ed25519 signature of `message` by `publicKey`; never throws. */
export function verifySignature(publicKey: KeyObject, message: Buffer, signature: string): boolean {
  try {
    return verify(null, message, publicKey, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** Raw 32-byte public key (base64url) of an Ed25519 key object. */
export function rawPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' }) as { x?: string };
  if (!jwk.x) throw new Error('not an Ed25519 key');
  return jwk.x;
}
