import type { Agent } from 'node:http';
import {
  AGENT_CONNECT_PATH,
  AGENT_PROTOCOL_VERSION,
  CLOSE,
  HEALTH_FEATURE,
  HEALTH_INTERVAL_MS,
  MAX_FRAME_BYTES,
  PERMANENT_CLOSE_CODES,
  createSealKeyPair,
  signedChallenge,
} from '@holdfast/agents/protocol';
import { AdapterRegistry } from '@holdfast/kernel';
import { WebSocket } from 'ws';
import { saveEnrollment, signWith, type AgentIdentity } from './agent-state.js';
import { AgentCallRunner } from './call-runner.js';
import { AgentHealthProbe, healthIntervalFromEnv } from './health.js';
import { ScratchJournal } from './scratch-journal.js';

/** One line of the agent's log (JSON on stdout). */
export type AgentLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What {@link runAgent} needs. */
export interface AgentRunOptions {
  /** Server base URL, `http(s)://host[:port]`. */
  server: string;
  stateDir: string;
  identity: AgentIdentity;
  /** Enrollment token; used only while the state directory holds no enrollment. */
  token?: string;
  version: string;
  host: string;
  /** Source adapter packages this agent can load (reported in every hello). */
  adapters: string[];
  /** The loaded source adapters the server's calls run (none: every call fails naming the missing adapter). */
  registry?: AdapterRegistry;
  /** Longest wait between attempts (1 s doubling up to this, with jitter); default 30 s. */
  maxBackoffMs?: number;
  /** HTTP(S) proxy agent for the connection (from HTTPS_PROXY/HTTP_PROXY), when configured. */
  proxyAgent?: Agent;
  /** Health reports (docs/agents.md "Agent health"); default: a probe of `stateDir`, tools detected once. */
  health?: AgentHealthProbe;
  /** How often the health is sent after the hello; default `HOLDFAST_AGENT_HEALTH_SECONDS` or 60 s. */
  healthIntervalMs?: number;
  log: AgentLog;
  signal: AbortSignal;
}

/** How a run of the agent ended: stopped by a signal (0) or refused for good (the close code says why). */
export interface AgentExit {
  stopped: boolean;
  code?: number;
  reason?: string;
}

interface AttemptOutcome {
  code: number;
  reason: string;
  /** The server welcomed this connection (so the backoff starts again from 1 s). */
  wasWelcomed: boolean;
}

/** The WebSocket URL of the agents' endpoint for a server base URL. */
export function connectUrl(server: string): string {
  const url = new URL(server);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--server must be an http:// or https:// URL, got ${url.protocol}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${AGENT_CONNECT_PATH}`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

/** Delay before attempt `attempt` (0-based): 1 s doubling to `max`, each drawn uniformly from its upper half (jitter). */
export function backoffDelay(attempt: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, 1000 * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Keeps the agent connected until `signal` aborts or the server refuses its identity for good (revoked, token
 * refused, unsupported protocol). Every other end (server restart, network loss, disabled agent, dead server) is
 * followed by a new attempt after the backoff.
 */
export async function runAgent(options: AgentRunOptions): Promise<AgentExit> {
  const url = connectUrl(options.server);
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  // One probe for the agent's life: the dump tools' versions are asked once, at start.
  const health = options.health ?? new AgentHealthProbe(options.stateDir);
  const healthIntervalMs = options.healthIntervalMs ?? healthIntervalFromEnv(process.env, HEALTH_INTERVAL_MS);
  // Before the first connection, so no test restore of this process uses them: folders an earlier run left.
  const scratchJournal = new ScratchJournal(options.stateDir);
  const swept = await scratchJournal.sweep().catch(() => [] as string[]);
  if (swept.length > 0) options.log('info', 'removed scratch folders a test restore left when the agent stopped', { folders: swept });
  let attempt = 0;
  while (!options.signal.aborted) {
    const outcome = await connectOnce(url, options, health, healthIntervalMs, scratchJournal);
    if (options.signal.aborted) break;
    if (PERMANENT_CLOSE_CODES.has(outcome.code)) {
      options.log('error', 'server refused this agent for good', { code: outcome.code, reason: outcome.reason });
      return { stopped: false, code: outcome.code, reason: outcome.reason };
    }
    attempt = outcome.wasWelcomed ? 0 : attempt + 1;
    const delay = backoffDelay(outcome.wasWelcomed ? 0 : attempt - 1, maxBackoffMs);
    options.log('warn', 'disconnected; reconnecting', { code: outcome.code, reason: outcome.reason, retryInMs: delay });
    await sleep(delay, options.signal);
  }
  return { stopped: true };
}

function connectOnce(url: string, options: AgentRunOptions, health: AgentHealthProbe, healthIntervalMs: number, scratchJournal: ScratchJournal): Promise<AttemptOutcome> {
  const { identity, log } = options;
  const enrolling = identity.agentId === undefined;
  return new Promise((resolve) => {
    let wasWelcomed = false;
    let watchdog: NodeJS.Timeout | undefined;
    let healthTimer: NodeJS.Timeout | undefined;
    const socket = new WebSocket(url, { agent: options.proxyAgent, handshakeTimeout: 10_000, maxPayload: MAX_FRAME_BYTES });
    const onAbort = () => socket.close(1000, 'agent stopping');
    options.signal.addEventListener('abort', onAbort, { once: true });
    // A server that stops answering (host gone, network cut without a FIN) is noticed by its missing pings.
    const watch = (pingIntervalMs: number) => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        log('warn', 'no ping from the server; dropping the connection', { waitedMs: pingIntervalMs * 2.5 });
        socket.terminate();
      }, pingIntervalMs * 2.5);
    };
    let pingIntervalMs = 0;
    socket.on('ping', () => pingIntervalMs > 0 && watch(pingIntervalMs));
    socket.on('open', () => {
      const first = enrolling
        ? { type: 'enroll', protocol: AGENT_PROTOCOL_VERSION, token: options.token ?? '', publicKey: identity.publicKey }
        : { type: 'authenticate', protocol: AGENT_PROTOCOL_VERSION, agentId: identity.agentId };
      socket.send(JSON.stringify(first));
    });
    let runner: AgentCallRunner | undefined;
    let serverOffersDirect = false;
    socket.on('message', (data, isBinary) => {
      if (runner?.onFrame(data as Buffer, isBinary)) return;
      if (isBinary) return socket.close(CLOSE.protocolError, 'protocol error: unexpected binary frame');
      let frame: { type?: string; nonce?: string; agentId?: string; pingIntervalMs?: number; features?: unknown };
      try {
        frame = JSON.parse(String(data)) as typeof frame;
      } catch {
        return socket.close(CLOSE.protocolError, 'protocol error: frame is not JSON');
      }
      if (frame.type === 'challenge' && typeof frame.nonce === 'string') {
        const subject = enrolling ? 'enroll' : identity.agentId!;
        socket.send(JSON.stringify({ type: 'signature', signature: signWith(identity, signedChallenge(subject, frame.nonce)) }));
        return;
      }
      if (frame.type === 'welcome' && typeof frame.agentId === 'string') {
        const features = Array.isArray(frame.features) ? (frame.features as unknown[]) : [];
        serverOffersDirect = features.includes('direct');
        void welcomed(frame.agentId, Number(frame.pingIntervalMs) || 15_000, features.includes('log'), features.includes(HEALTH_FEATURE)).catch((error: unknown) => {
          log('error', 'could not complete the connection', { err: (error as Error).message });
          socket.close(1011, 'agent error');
        });
        return;
      }
      log('warn', 'unexpected frame from the server', { type: frame.type });
    });
    const welcomed = async (agentId: string, interval: number, forwardLogs: boolean, sendsHealth: boolean) => {
      if (enrolling) {
        await saveEnrollment(options.stateDir, agentId, options.server);
        identity.agentId = agentId;
        log('info', 'enrolled', { agentId });
      }
      wasWelcomed = true;
      // Log lines go to the server only when it said it accepts them (an older server would close the connection).
      // Direct uploads: a fresh X25519 key pair per connection, in memory only (the server seals each call's secrets to it).
      const direct = serverOffersDirect ? { keys: createSealKeyPair(), agentId } : undefined;
      runner = new AgentCallRunner(socket, options.registry ?? new AdapterRegistry(), log, forwardLogs, direct, scratchJournal);
      pingIntervalMs = interval;
      watch(interval);
      // Features go only to a server that listed its own (an older one refuses unknown hello fields).
      const features = forwardLogs ? { features: ['scratch', 'scratch-files', 'archive', ...(direct ? ['direct'] : [])] } : {};
      const storageAdapters = (options.registry?.list('storage') ?? []).map((entry) => entry.origin.packageName).sort();
      const directHello = direct ? { sealKey: direct.keys.publicKey, storageAdapters } : {};
      // Health goes only to a server that listed `health` (an older one refuses the unknown hello field and frame).
      const report = sendsHealth ? { health: await health.report() } : {};
      if (socket.readyState !== socket.OPEN) return;
      socket.send(JSON.stringify({ type: 'hello', version: options.version, host: options.host, adapters: options.adapters, ...features, ...report, ...directHello }));
      if (sendsHealth) {
        const send = () =>
          void health.report().then((current) => {
            if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: 'health', health: current }));
          });
        // The first report after the hello's comes at a random point of the period: agents that reconnect together
        // (a server restart) do not all report in the same heartbeat round, which writes them (docs/agents.md).
        healthTimer = setTimeout(() => {
          send();
          healthTimer = setInterval(send, healthIntervalMs);
          healthTimer.unref();
        }, Math.round(Math.random() * healthIntervalMs));
        healthTimer.unref();
      }
      log('info', 'connected', { agentId, server: options.server });
    };
    socket.on('error', (error) => log('warn', 'connection error', { err: error.message }));
    socket.on('close', (code, reason) => {
      clearTimeout(watchdog);
      clearTimeout(healthTimer);
      clearInterval(healthTimer);
      runner?.closeAll();
      options.signal.removeEventListener('abort', onAbort);
      resolve({ code, reason: reason.toString('utf8'), wasWelcomed });
    });
  });
}
