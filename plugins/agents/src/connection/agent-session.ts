import { randomBytes } from 'node:crypto';
import type { KernelLogger } from '@holdfast/kernel';
import type { WebSocket } from 'ws';
import type { z } from 'zod';
import type { AgentStore, AgentView } from '../agent-store.js';
import {
  AGENT_PROTOCOL_VERSION,
  authenticateFrame,
  CLOSE,
  ed25519PublicKey,
  enrollFrame,
  HANDSHAKE_MAX_FRAME_BYTES,
  helloFrame,
  signatureFrame,
  signedChallenge,
  verifySignature,
  type ChallengeFrame,
  type HelloFrame,
  type WelcomeFrame,
} from '../protocol.js';
import { agentCallFrame, type CallMethod } from '../calls/call-frames.js';
import { HEALTH_FEATURE, HEALTH_MAX_FRAME_BYTES, healthFrame, type AgentHealth } from './agent-health.js';
import { CallChannel } from '../calls/call-channel.js';

function safeJson(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** What a session needs from the endpoint that accepted it. */
export interface SessionHost {
  store: AgentStore;
  logger: KernelLogger;
  pingIntervalMs: number;
  /** Makes this the agent's live connection (closing an older one); called once the signature verified. */
  register(agentId: string, session: AgentSession): void;
  /** The agent said hello: record it and raise `agent_online`. */
  online(session: AgentSession, hello: HelloFrame): Promise<void>;
  /** Ends the handshake budget: the endpoint counts sessions still in their handshake. */
  handshakeDone(session: AgentSession): void;
  /** The agent sent a health report after its hello: kept until the next heartbeat writes it. */
  healthReported(session: AgentSession, health: AgentHealth): void;
}

type Stage = 'first' | 'signature' | 'hello' | 'ready' | 'busy' | 'closed';

interface Claim {
  agent: AgentView;
  /** Set while enrolling: the token to use up and the key to store once the signature proves the key is held. */
  enrollment?: { token: string; publicKey: string };
  keyOf: ReturnType<typeof ed25519PublicKey>;
  nonce: string;
}

/**
 * One agent connection, from the first frame to the close. Before the hello completes, every frame must be a small
 * JSON text frame of the one type the current step expects, and the whole handshake must finish within the time the
 * endpoint gives; anything else closes the socket with a reason. The server waits on nothing the client controls.
 */
export class AgentSession {
  private stage: Stage = 'first';
  private claim: Claim | undefined;
  /** The hello arrived (the server may still be recording it). */
  private helloReceived = false;
  /** Set once authenticated (enrolled or signed). */
  agentId: string | undefined;
  agentName: string | undefined;
  host: string | null = null;
  isOnline = false;
  /** Answered the last ping (the endpoint's heartbeat reads and resets it). */
  isAlive = true;
  /** Why the server closed it, for the `agent_offline` event. */
  closeReason = 'connection closed';
  /** Settles once the socket closed and the endpoint recorded the end (offline, event). */
  finished: Promise<void> = Promise.resolve();
  /** Source adapter packages the agent reported in its hello (what it can run). */
  adapters: readonly string[] = [];
  /** Features the agent listed in its hello (`scratch`: it answers test restore scratch calls). */
  features: readonly string[] = [];
  /** Feature `direct`: this connection's X25519 key the server seals direct calls' secrets to, and its storage packages. */
  sealKey: string | undefined;
  storageAdapters: readonly string[] = [];
  /** The calls the server makes on this agent once it said hello (docs/agents.md "Protocol"). */
  readonly calls: CallChannel;

  constructor(
    readonly socket: WebSocket,
    private readonly endpoint: SessionHost,
    readonly remoteAddress: string,
  ) {
    this.calls = new CallChannel({
      sendText: (frame) => this.socket.send(JSON.stringify(frame)),
      sendBinary: (frame) => this.socket.send(frame, { binary: true }),
      bufferedAmount: () => this.socket.bufferedAmount,
      protocolError: (reason) => this.close(CLOSE.protocolError, reason),
    });
    socket.on('message', (data, isBinary) => this.onFrame(data as Buffer, isBinary));
    socket.on('pong', () => {
      this.isAlive = true;
    });
    // Calls in flight fail the moment the connection is gone, not when the endpoint has recorded it offline.
    socket.on('close', () => this.calls.closed((method) => this.interrupted(method)));
  }

  /** True once the agent said hello on this connection and it is still open: calls may be made. */
  get isReady(): boolean {
    return this.stage === 'ready' && this.isOnline && this.socket.readyState === this.socket.OPEN;
  }

  private interrupted(method: CallMethod): Error {
    return new Error(`interrupted: agent "${this.agentName ?? this.agentId}" disconnected during ${method}`);
  }

  get isAuthenticated(): boolean {
    return this.stage === 'hello' || this.stage === 'ready';
  }

  /** Closes with an application code and a reason the agent can show (at most 123 bytes by RFC 6455). */
  close(code: number, reason: string): void {
    if (this.stage === 'closed') return;
    this.stage = 'closed';
    this.closeReason = reason;
    this.endpoint.handshakeDone(this);
    // Calls in flight fail now, not after the close handshake (up to a second with a peer that does not answer).
    this.calls.closed((method) => this.interrupted(method));
    try {
      this.socket.close(code, reason.slice(0, 120));
    } catch {
      this.socket.terminate();
    }
    // A peer that does not answer the close frame must not keep the socket: cut it shortly after.
    setTimeout(() => this.socket.terminate(), 1_000).unref();
  }

  private send(frame: ChallengeFrame | WelcomeFrame): void {
    this.socket.send(JSON.stringify(frame));
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (this.stage === 'closed') return;
    if (this.stage === 'ready') return this.onCallFrame(data, isBinary);
    if ((isBinary || data.length > HANDSHAKE_MAX_FRAME_BYTES)) {
      return this.close(CLOSE.protocolError, isBinary ? 'protocol error: binary frames are not accepted' : 'protocol error: handshake frame too large');
    }
    if (this.stage === 'busy') {
      // A health report sent while the server still records the hello (a slow database): the hello carried one.
      if (this.helloReceived && data.includes('"health"') && (safeJson(data) as { type?: unknown } | undefined)?.type === 'health') return;
      return this.close(CLOSE.protocolError, 'protocol error: a frame arrived before the server answered the previous one');
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return this.close(CLOSE.protocolError, 'protocol error: frame is not JSON');
    }
    const stage = this.stage;
    this.stage = 'busy';
    this.step(stage, message).catch((error: unknown) => {
      this.endpoint.logger.error({ err: (error as Error).message, agentId: this.agentId }, 'agent handshake step failed');
      this.close(1011, 'server error during handshake');
    });
  }

  /** After the hello: only answers to the server's calls (no frame asks the server for anything). */
  private onCallFrame(data: Buffer, isBinary: boolean): void {
    if (isBinary) return this.calls.onBinary(data);
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return this.close(CLOSE.protocolError, 'protocol error: frame is not JSON');
    }
    if ((message as { type?: unknown } | null)?.type === 'health') return this.onHealth(data, message);
    const frame = this.parse(agentCallFrame, message, 'an answer to a call (opened, result, error, credit, end or log)');
    if (frame) this.calls.onText(frame);
  }

  /** A health report: bounded in size and strictly shaped like every frame; a bad one is a protocol error. */
  private onHealth(data: Buffer, message: unknown): void {
    if (data.length > HEALTH_MAX_FRAME_BYTES) return this.close(CLOSE.protocolError, 'protocol error: health frame too large');
    const frame = this.parse(healthFrame, message, 'a health frame');
    if (frame) this.endpoint.healthReported(this, frame.health);
  }

  private parse<T extends z.ZodType>(schema: T, message: unknown, what: string): z.infer<T> | undefined {
    const parsed = schema.safeParse(message);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    this.close(CLOSE.protocolError, `protocol error: expected ${what}${issue ? ` (${issue.path.join('.') || 'frame'}: ${issue.message})` : ''}`);
    return undefined;
  }

  private async step(stage: Stage, message: unknown): Promise<void> {
    if (stage === 'first') return this.first(message);
    if (stage === 'signature') return this.signature(message);
    if (stage === 'hello') return this.hello(message);
  }

  private async first(message: unknown): Promise<void> {
    const type = (message as { type?: unknown } | null)?.type;
    const frame = type === 'enroll' ? this.parse(enrollFrame, message, 'an enroll frame') : this.parse(authenticateFrame, message, 'an enroll or authenticate frame');
    if (!frame) return;
    if (frame.protocol !== AGENT_PROTOCOL_VERSION) {
      return this.close(CLOSE.unsupportedVersion, `unsupported protocol version ${frame.protocol}: this server speaks ${AGENT_PROTOCOL_VERSION}`);
    }
    const nonce = randomBytes(32).toString('base64url');
    if (frame.type === 'enroll') {
      let keyOf: Claim['keyOf'];
      try {
        keyOf = ed25519PublicKey(frame.publicKey);
      } catch {
        return this.close(CLOSE.protocolError, 'protocol error: publicKey is not a raw 32-byte Ed25519 key');
      }
      const found = await this.endpoint.store.agentForToken(frame.token);
      if ('refusal' in found) {
        const code = found.refusal === 'agent disabled' ? CLOSE.disabled : found.refusal === 'agent revoked' ? CLOSE.revoked : CLOSE.enrollmentRefused;
        return this.close(code, `enrollment token refused: ${found.refusal}`);
      }
      this.claim = { agent: found.agent, enrollment: { token: frame.token, publicKey: frame.publicKey }, keyOf, nonce };
    } else {
      const agent = await this.endpoint.store.find(frame.agentId);
      // Unknown agent and not-yet-enrolled agent get the same answer as a bad signature: nothing to probe.
      if (!agent || !agent.publicKey) return this.close(CLOSE.authenticationFailed, 'authentication failed');
      if (agent.status === 'revoked') return this.close(CLOSE.revoked, 'agent revoked: it can never connect again');
      if (!agent.enabled) return this.close(CLOSE.disabled, 'agent disabled by an administrator');
      this.claim = { agent, keyOf: ed25519PublicKey(agent.publicKey), nonce };
    }
    this.stage = 'signature';
    this.send({ type: 'challenge', nonce });
  }

  private async signature(message: unknown): Promise<void> {
    const frame = this.parse(signatureFrame, message, 'a signature frame');
    const claim = this.claim;
    if (!frame || !claim) return;
    const subject = claim.enrollment ? 'enroll' : claim.agent.id;
    if (!verifySignature(claim.keyOf, signedChallenge(subject, claim.nonce), frame.signature)) {
      this.endpoint.logger.warn({ agentId: claim.agent.id, remoteAddress: this.remoteAddress }, 'agent signature did not verify');
      return this.close(CLOSE.authenticationFailed, 'authentication failed');
    }
    if (claim.enrollment && !(await this.endpoint.store.consumeToken(claim.agent.id, claim.enrollment.token, claim.enrollment.publicKey))) {
      return this.close(CLOSE.enrollmentRefused, 'enrollment token refused: unknown or already used');
    }
    this.agentId = claim.agent.id;
    this.agentName = claim.agent.name;
    this.claim = undefined;
    this.endpoint.register(claim.agent.id, this);
    // Checked after registering: an administrator who disables or revokes from now on finds this connection to close.
    const now = await this.endpoint.store.find(claim.agent.id);
    if (!now || now.status === 'revoked') return this.close(CLOSE.revoked, 'agent revoked: it can never connect again');
    if (!now.enabled) return this.close(CLOSE.disabled, 'agent disabled by an administrator');
    if (claim.enrollment) this.endpoint.logger.info({ agentId: claim.agent.id, agentName: claim.agent.name }, 'agent enrolled');
    this.stage = 'hello';
    this.send({ type: 'welcome', agentId: claim.agent.id, pingIntervalMs: this.endpoint.pingIntervalMs, features: ['log', HEALTH_FEATURE, 'direct'] });
  }

  private async hello(message: unknown): Promise<void> {
    const frame = this.parse(helloFrame, message, 'a hello frame');
    if (!frame || !this.agentId) return;
    this.helloReceived = true;
    this.host = frame.host;
    this.adapters = frame.adapters;
    this.features = frame.features ?? [];
    this.sealKey = frame.sealKey;
    this.storageAdapters = frame.storageAdapters ?? [];
    await this.endpoint.online(this, frame);
    if (this.stage === 'busy') this.stage = 'ready';
    this.endpoint.handshakeDone(this);
  }
}
