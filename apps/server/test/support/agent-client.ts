// A scriptable agent-side WebSocket client for tests: the real protocol (docs/agents.md) with every step exposed, so a
// test can play a good agent or a hostile one (wrong key, replayed signature, garbage, silence).
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { AGENT_CONNECT_PATH, AGENT_PROTOCOL_VERSION, rawPublicKey, signedChallenge } from '@holdfast/agents/protocol';
import { WebSocket } from 'ws';

/** An Ed25519 key pair as an agent holds it. */
export interface TestKey {
  privateKey: KeyObject;
  publicKey: string;
}

export function newAgentKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: rawPublicKey(publicKey) };
}

/** How a socket ended. */
export interface Closed {
  code: number;
  reason: string;
}

/** One open connection with its frames queued. */
export interface TestConnection {
  socket: WebSocket;
  /** The next frame from the server (JSON), or the close if the socket ends first. */
  next(timeoutMs?: number): Promise<Record<string, unknown> | Closed>;
  closed: Promise<Closed>;
  send(frame: unknown): void;
}

export function isClosed(value: unknown): value is Closed {
  return typeof value === 'object' && value !== null && 'code' in value && !('type' in value);
}

export async function openConnection(baseUrl: string): Promise<TestConnection> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${AGENT_CONNECT_PATH}`);
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let closedWith: Closed | undefined;
  const wake = () => waiters.splice(0).forEach((resolve) => resolve());
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Record<string, unknown>);
    wake();
  });
  const closed = new Promise<Closed>((resolve) =>
    socket.on('close', (code, reason) => {
      closedWith = { code, reason: reason.toString('utf8') };
      resolve(closedWith);
      wake();
    }),
  );
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    closed,
    send: (frame) => socket.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame)),
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (frames.length === 0 && !closedWith) {
        if (Date.now() > deadline) throw new Error('no frame from the server in time');
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return frames.shift() ?? closedWith!;
    },
  };
}

const signatureOf = (key: TestKey, subject: string, nonce: string) => sign(null, signedChallenge(subject, nonce), key.privateKey).toString('base64url');

/** Runs the handshake; resolves the open connection after the welcome and hello, or the close that refused it. */
export async function handshake(
  baseUrl: string,
  key: TestKey,
  claim: { token: string } | { agentId: string },
  hello = { version: '9.9.9-test', host: 'test-host', adapters: ['@holdfast/source-postgres'] },
): Promise<{ connection: TestConnection; agentId: string } | Closed> {
  const connection = await openConnection(baseUrl);
  connection.send(
    'token' in claim
      ? { type: 'enroll', protocol: AGENT_PROTOCOL_VERSION, token: claim.token, publicKey: key.publicKey }
      : { type: 'authenticate', protocol: AGENT_PROTOCOL_VERSION, agentId: claim.agentId },
  );
  const challenge = await connection.next();
  if (isClosed(challenge)) return challenge;
  connection.send({ type: 'signature', signature: signatureOf(key, 'token' in claim ? 'enroll' : claim.agentId, String(challenge.nonce)) });
  const welcome = await connection.next();
  if (isClosed(welcome)) return welcome;
  connection.send({ type: 'hello', ...hello });
  return { connection, agentId: String(welcome.agentId) };
}

export { signatureOf };
