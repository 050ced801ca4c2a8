// A worker process of the agents scale bench (tooling/bench/agents-scale.mjs): holds a share of the simulated agents.
// Each one is a plain `ws` client doing the real handshake of docs/agents.md "Protocol" (enroll with the one-time
// token and a fresh Ed25519 key, sign the challenge, hello), then stays idle: `ws` answers the server's pings by
// itself, as the real agent does. The parent talks to it over IPC:
//   parent -> { type: 'connect', url, agents: [{ id, token }] }  enrolls them, at most IN_FLIGHT handshakes at once
//   parent -> { type: 'reconnect', id }                            the authenticate handshake (already enrolled)
//   parent -> { type: 'counts' }                                   pings seen and agents open
//   parent -> { type: 'stop' }                                     closes every socket and exits
//   worker -> { type: 'connected', id, ms } | { type: 'failed', id, error } | { type: 'connect-done' }
//   worker -> { type: 'closed', id, code, reason, at }             `at` in epoch ms (performance.timeOrigin based)
//   worker -> { type: 'call', id, method, at }                      a `call` frame arrived (then answered at once:
//             check -> ok, detectVersion -> a PostgreSQL version, anything else -> an UNSUPPORTED error)
import { generateKeyPairSync, sign } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { AGENT_CONNECT_PATH, AGENT_PROTOCOL_VERSION, signedChallenge } from '@holdfast/agents/protocol';
import { WebSocket } from 'ws';

/** Handshakes in flight per worker: the server answers 503 above 256 in flight in total. */
const IN_FLIGHT = 24;
const HELLO = {
  type: 'hello',
  version: '0.1.0-bench',
  host: `${hostname()}-sim`,
  adapters: ['@holdfast/source-postgres', '@holdfast/source-directory'],
};

const agents = new Map();
let pings = 0;
const now = () => performance.timeOrigin + performance.now();
const send = (message) => process.send?.(message);

/** One handshake; resolves once the hello is sent after the welcome (the server marks online on it). */
function handshake(url, agent, first) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}${AGENT_CONNECT_PATH}`);
    let welcomed = false;
    socket.on('open', () => socket.send(JSON.stringify(first)));
    socket.on('ping', () => (pings += 1));
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === 'challenge') {
        const subject = first.type === 'enroll' ? 'enroll' : agent.id;
        socket.send(
          JSON.stringify({
            type: 'signature',
            signature: sign(null, signedChallenge(subject, frame.nonce), agent.privateKey).toString('base64url'),
          })
        );
      } else if (frame.type === 'call') {
        send({ type: 'call', id: agent.id, method: frame.method, at: now() });
        socket.send(JSON.stringify(answerTo(frame)));
      } else if (frame.type === 'welcome') {
        welcomed = true;
        socket.send(JSON.stringify(HELLO));
        agent.socket = socket;
        resolve(performance.now() - started);
      }
    });
    socket.on('close', (code, reason) => {
      if (!welcomed) return reject(new Error(`closed ${code} ${String(reason)} before the welcome`));
      send({
        type: 'closed',
        id: agent.id,
        code,
        reason: String(reason),
        at: now(),
      });
    });
    socket.on('error', (error) => {
      if (!welcomed) reject(error);
    });
  });
}

/** The simulated adapter: answers the connection test's two calls, refuses the rest. */
function answerTo(call) {
  if (call.method === 'check') return { type: 'result', id: call.id, value: { ok: true, message: 'simulated agent', latencyMs: 0 } };
  if (call.method === 'detectVersion') return { type: 'result', id: call.id, value: { version: '16.4', edition: 'PostgreSQL' } };
  return { type: 'error', id: call.id, message: `the simulated agent does not run ${call.method}`, code: 'UNSUPPORTED' };
}

async function connectAll(url, list) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(IN_FLIGHT, list.length) }, async () => {
    for (;;) {
      const entry = list[next++];
      if (!entry) return;
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const agent = { id: entry.id, privateKey, socket: undefined };
      agents.set(entry.id, agent);
      const raw = publicKey.export({ format: 'jwk' }).x;
      try {
        const ms = await handshake(url, agent, {
          type: 'enroll',
          protocol: AGENT_PROTOCOL_VERSION,
          token: entry.token,
          publicKey: raw,
        });
        send({ type: 'connected', id: entry.id, ms });
      } catch (error) {
        send({ type: 'failed', id: entry.id, error: error.message });
      }
    }
  });
  await Promise.all(lanes);
  send({ type: 'connect-done' });
}

process.on('message', (message) => {
  if (message.type === 'connect') void connectAll(message.url, message.agents);
  if (message.type === 'reconnect') {
    const agent = agents.get(message.id);
    handshake(message.url, agent, {
      type: 'authenticate',
      protocol: AGENT_PROTOCOL_VERSION,
      agentId: agent.id,
    }).then(
      (ms) => send({ type: 'reconnected', id: agent.id, ms }),
      (error) => send({ type: 'failed', id: agent.id, error: error.message })
    );
  }
  if (message.type === 'counts') {
    const open = [...agents.values()].filter((agent) => agent.socket?.readyState === WebSocket.OPEN).length;
    send({ type: 'counts', pings, open });
  }
  if (message.type === 'stop') {
    for (const agent of agents.values()) agent.socket?.terminate();
    process.exit(0);
  }
});
send({ type: 'ready' });
