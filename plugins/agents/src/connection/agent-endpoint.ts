import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EventBus, KernelLogger, UpgradeEndpoint } from '@holdfast/kernel';
import { WebSocketServer } from 'ws';
import type { AgentStore } from '../agent-store.js';
import { AGENT_CONNECT_PATH, CLOSE, MAX_FRAME_BYTES, type HelloFrame } from '../protocol.js';
import type { AgentHealth } from './agent-health.js';
import { AgentSession, type SessionHost } from './agent-session.js';

/** Timings and limits of the endpoint (docs/agents.md "Connection"). */
export interface AgentEndpointOptions {
  /** The whole handshake (first frame to hello) must finish within this (default 10 s). */
  handshakeTimeoutMs: number;
  /** Ping period; a connection that misses one pong is cut at the next ping, so dead ones go within 2x this (default 15 s). */
  pingIntervalMs: number;
  /** Connections allowed in their handshake at once; more are answered 503 before the upgrade (default 256). */
  maxPendingHandshakes: number;
  /**
   * Several processes on one PostgreSQL: how often this process reads whether an agent it holds was disabled or
   * revoked through another process, or reconnected to another one (default 2 s). Not polled on the embedded database.
   */
  controlPollMs: number;
}

export const DEFAULT_ENDPOINT_OPTIONS: AgentEndpointOptions = { handshakeTimeoutMs: 10_000, pingIntervalMs: 15_000, maxPendingHandshakes: 256, controlPollMs: 2_000 };

/** Presence older than this many ping periods means its holding process is gone. */
const STALE_PING_PERIODS = 3;

/**
 * The agents' WebSocket endpoint on the server's own listener (`/api/agents/connect`). It keeps one live connection
 * per agent, pings them, records presence in the store and raises `agent_online` / `agent_offline`; the routes call
 * {@link disconnect} when an administrator disables or revokes an agent.
 */
export class AgentEndpoint implements UpgradeEndpoint, SessionHost {
  readonly path = AGENT_CONNECT_PATH;
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, clientTracking: false });
  private readonly live = new Map<string, AgentSession>();
  private readonly handshaking = new Set<AgentSession>();
  private readonly sessions = new Set<AgentSession>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Agents whose going offline was announced (agent_offline) by this process: their return is announced too. */
  private readonly announcedOffline = new Set<string>();
  /** Health reports received since the last heartbeat round, latest per agent (written in one batch per round). */
  private readonly pendingHealth = new Map<string, { agentId: string; health: AgentHealth; reportedAt: Date }>();
  private heartbeat: NodeJS.Timeout | undefined;
  private controlPoll: NodeJS.Timeout | undefined;
  private isPolling = false;
  private isStopping = false;

  constructor(
    readonly store: AgentStore,
    private readonly events: () => EventBus,
    readonly logger: KernelLogger,
    private readonly options: AgentEndpointOptions = DEFAULT_ENDPOINT_OPTIONS,
  ) {}

  get pingIntervalMs(): number {
    return this.options.pingIntervalMs;
  }

  /** How old an agent's presence may be before its holding process counts as gone. */
  get staleAfterMs(): number {
    return STALE_PING_PERIODS * this.options.pingIntervalMs;
  }

  /** The agent's connection when it said hello and is open (calls may be made on it); undefined otherwise. */
  readySession(agentId: string): AgentSession | undefined {
    const session = this.live.get(agentId);
    return session?.isReady ? session : undefined;
  }

  /** Agent ids with a live, authenticated connection to this process. */
  connectedIds(): string[] {
    return [...this.live.keys()];
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.isStopping || this.handshaking.size >= this.options.maxPendingHandshakes) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.server.handleUpgrade(request, socket, head, (ws) => {
      const session = new AgentSession(ws, this, request.socket.remoteAddress ?? 'unknown');
      this.sessions.add(session);
      this.handshaking.add(session);
      const deadline = setTimeout(() => {
        if (this.handshaking.has(session)) session.close(CLOSE.handshakeTimeout, `handshake not completed within ${this.options.handshakeTimeoutMs / 1000} s`);
      }, this.options.handshakeTimeoutMs);
      deadline.unref();
      ws.on('error', () => ws.terminate());
      let finish: () => void = () => undefined;
      session.finished = new Promise<void>((resolve) => (finish = resolve));
      ws.on('close', () => {
        clearTimeout(deadline);
        this.handshaking.delete(session);
        this.sessions.delete(session);
        const ended = this.ended(session).finally(finish);
        this.track(ended);
      });
    });
  }

  /** Starts the heartbeat: a session that did not answer the previous ping is cut now. */
  start(): void {
    this.heartbeat = setInterval(() => {
      const alive: string[] = [];
      for (const session of this.live.values()) {
        if (!session.isAlive) {
          session.closeReason = 'no answer to pings';
          session.socket.terminate();
          continue;
        }
        session.isAlive = false;
        session.socket.ping();
        alive.push(session.agentId!);
      }
      // One write per round for all answering agents, not one per agent: 500 single-row updates at the same moment
      // queued every API query behind them on the embedded database (docs/agents.md "Scale").
      if (alive.length > 0) this.track(this.store.touchAll(alive).catch(() => undefined));
      void this.flushHealth();
      // Agents of a process that died (its presence stopped being refreshed) go offline.
      this.track(this.store.clearStalePresence(this.staleAfterMs, false).catch(() => undefined));
    }, this.options.pingIntervalMs);
    this.heartbeat.unref();
    if (this.store.isShared()) {
      this.controlPoll = setInterval(() => void this.releaseChanged(), this.options.controlPollMs);
      this.controlPoll.unref();
    }
  }

  /**
   * Several processes: closes the connections of agents disabled or revoked through another process's API, and of
   * agents that reconnected to another process (the newer connection wins, as within one process).
   */
  private async releaseChanged(): Promise<void> {
    if (this.isPolling || this.live.size === 0) return;
    this.isPolling = true;
    try {
      for (const state of await this.store.heldToRelease([...this.live.keys()])) {
        if (state.status === 'revoked') void this.disconnect(state.id, CLOSE.revoked, 'agent revoked: it can never connect again');
        else if (!state.enabled) void this.disconnect(state.id, CLOSE.disabled, 'agent disabled by an administrator');
        else {
          // Forgotten first: the agent is online elsewhere, so this end is neither recorded offline nor announced.
          const session = this.live.get(state.id);
          this.live.delete(state.id);
          session?.close(CLOSE.replaced, 'replaced by a newer connection of the same agent (on another server process)');
        }
      }
    } catch (error) {
      this.logger.debug?.({ err: (error as Error).message }, 'agents: control poll failed; trying again');
    } finally {
      this.isPolling = false;
    }
  }

  register(agentId: string, session: AgentSession): void {
    const older = this.live.get(agentId);
    this.live.set(agentId, session);
    if (older && older !== session) older.close(CLOSE.replaced, 'replaced by a newer connection of the same agent');
  }

  healthReported(session: AgentSession, health: AgentHealth): void {
    const agentId = session.agentId;
    if (!agentId || this.live.get(agentId) !== session) return;
    // Only the latest report counts: an agent sending many between two rounds costs one row write, not one each.
    this.pendingHealth.set(agentId, { agentId, health, reportedAt: new Date() });
  }

  /** Writes the health reports received since the previous round (each heartbeat round, the stop, and tests). */
  flushHealth(): Promise<void> {
    if (this.pendingHealth.size === 0) return Promise.resolve();
    const reports = [...this.pendingHealth.values()];
    this.pendingHealth.clear();
    const written = this.store.recordHealth(reports).catch((error: unknown) => this.logger.warn({ err: (error as Error).message }, 'could not record agent health'));
    this.track(written);
    return written;
  }

  handshakeDone(session: AgentSession): void {
    this.handshaking.delete(session);
  }

  async online(session: AgentSession, hello: HelloFrame): Promise<void> {
    const agentId = session.agentId!;
    // The socket may have closed while the hello was on its way: only the current connection may mark online.
    if (this.live.get(agentId) !== session || session.socket.readyState !== session.socket.OPEN) return;
    const isFirstEver = (await this.store.find(agentId))?.lastSeenAt === null;
    if (!(await this.store.markOnline(agentId, hello))) return session.close(CLOSE.revoked, 'agent revoked: it can never connect again');
    const wasOnline = session.isOnline;
    session.isOnline = true;
    this.logger.info({ agentId, agentName: session.agentName, host: hello.host, version: hello.version, adapters: hello.adapters.length }, 'agent online');
    // Announced: an agent's first connection, and the return of one announced offline. Reconnections after this
    // server's own restart are not (their going offline was not announced either): no pair of messages per agent on
    // every restart.
    if (!wasOnline && (isFirstEver || this.announcedOffline.delete(agentId))) this.emit('agent_online', session);
  }

  /**
   * Closes the agent's live connection at once (administrator disabled or revoked it) and resolves when it is
   * recorded offline, so the route answers with the agent's new status; a peer that ignores the close frame is cut
   * after a second. True when a connection was open.
   */
  async disconnect(agentId: string, code: number, reason: string): Promise<boolean> {
    const session = this.live.get(agentId);
    // Sessions still in their handshake for this agent are closed too: they would be refused at registration anyway.
    for (const other of this.sessions) if (other !== session && other.agentId === agentId) other.close(code, reason);
    if (!session) return false;
    session.close(code, reason);
    await session.finished;
    return true;
  }

  async closeAll(): Promise<void> {
    this.isStopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.controlPoll) clearInterval(this.controlPoll);
    const closed = [...this.sessions].map(
      (session) =>
        new Promise<void>((resolve) => {
          if (session.socket.readyState === session.socket.CLOSED) return resolve();
          session.socket.once('close', () => resolve());
          session.close(1001, 'server stopping');
        }),
    );
    await Promise.all(closed);
    void this.flushHealth();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async ended(session: AgentSession): Promise<void> {
    const agentId = session.agentId;
    if (!agentId || this.live.get(agentId) !== session) return;
    this.live.delete(agentId);
    await this.store.markOffline(agentId).catch((error: unknown) => this.logger.warn({ agentId, err: (error as Error).message }, 'could not record the agent offline'));
    if (session.isOnline) {
      this.logger.info({ agentId, agentName: session.agentName, reason: session.closeReason }, 'agent offline');
      // The server stopping is not news about the agent (it reconnects when the server is back).
      if (!this.isStopping) {
        this.announcedOffline.add(agentId);
        this.emit('agent_offline', session);
      }
    }
  }

  private emit(name: 'agent_online' | 'agent_offline', session: AgentSession): void {
    const payload = {
      agentId: session.agentId!,
      agentName: session.agentName ?? session.agentId!,
      host: session.host,
      ...(name === 'agent_offline' ? { reason: session.closeReason } : {}),
      timestamp: new Date().toISOString(),
    };
    this.track(this.events().emit(name, payload));
  }

  private track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}
