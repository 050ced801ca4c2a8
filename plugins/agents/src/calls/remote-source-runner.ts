import type { AdapterRegistry, DirectDumpCall, DirectDumpRequest, KernelLogger, RemoteAgentSummary, RemoteSourceOptions, RemoteSourceRunner, ResolvedAdapterConfig, SourceAdapter, SourceScratch } from '@holdfast/kernel';
import { AdapterError } from '@holdfast/kernel';
import type { AgentStore } from '../agent-store.js';
import type { AgentEndpoint } from '../connection/agent-endpoint.js';
import type { AgentSession } from '../connection/agent-session.js';
import { startDirectDump } from './remote-direct-dump.js';
import type { CallChannel } from './call-channel.js';
import { RemoteSource, type AgentLink } from './remote-source.js';

/** How often a call waiting for an offline agent looks again. */
const WAIT_POLL_MS = 200;

/** `HOLDFAST_AGENT_WAIT_SECONDS` (default 60): how long a run waits for an offline agent; a bad value stops the start. */
export function agentWaitFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.HOLDFAST_AGENT_WAIT_SECONDS;
  if (raw === undefined || raw === '') return 60_000;
  if (!/^\d+$/.test(raw) || Number(raw) > 86_400) throw new Error(`HOLDFAST_AGENT_WAIT_SECONDS must be whole seconds from 0 to 86400, got "${raw}"`);
  return Number(raw) * 1000;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The agents plugin's `REMOTE_SOURCE_RUNNER`: sources bound to an agent run there. A call waits up to the configured
 * time for the agent to connect, then fails naming it; it also fails when the agent does not report the source's
 * adapter package in its hello.
 */
export class AgentSourceRunner implements RemoteSourceRunner, AgentLink {
  constructor(
    private readonly store: AgentStore,
    private readonly endpoint: AgentEndpoint,
    private readonly registry: () => AdapterRegistry,
    private readonly waitMs: number,
    private readonly logger: KernelLogger,
    /** The server's own instance of a source (never connected here: only for what `scratch()` describes). */
    private readonly localSource: (resolved: ResolvedAdapterConfig) => SourceAdapter,
  ) {}

  attachProcess(processId: string): void {
    this.store.holderId = processId;
  }

  holderOf(agentId: string): Promise<string | null> {
    return this.store.holderOf(agentId, this.endpoint.staleAfterMs);
  }

  /**
   * What the source's scratch is, from the server's own copy of the adapter package: `scratch()` is synchronous and
   * its placement, counts and server name (and its refusals, such as a source reached over SSH) depend only on the
   * config. The instance is built, asked and disposed here; it connects to nothing.
   */
  private localScratch(resolved: ResolvedAdapterConfig): SourceScratch {
    const local = this.localSource(resolved);
    try {
      if (!local.scratch) throw new AdapterError(`source-${resolved.adapterId}`, 'UNSUPPORTED', 'this source has no scratch databases');
      return local.scratch();
    } finally {
      void local.dispose?.()?.catch(() => undefined);
    }
  }

  async describeAgent(agentId: string): Promise<RemoteAgentSummary | null> {
    const agent = await this.store.find(agentId);
    return agent ? { id: agent.id, name: agent.name, revoked: agent.status === 'revoked' } : null;
  }

  source(resolved: ResolvedAdapterConfig & { agentId: string }, options: RemoteSourceOptions = {}): SourceAdapter {
    const prototype = (this.registry().get('source', resolved.adapterId)?.definition.implementation as { prototype?: Partial<SourceAdapter> } | undefined)?.prototype;
    const offers = { databaseSizes: typeof prototype?.databaseSizes === 'function', restoreWouldReplace: typeof prototype?.restoreWouldReplace === 'function', restoreArchive: typeof prototype?.restoreArchive === 'function' };
    return new RemoteSource(resolved, this, options.offlineWaitMs ?? this.waitMs, offers, { logger: options.logger, runLog: options.runLog }, () => this.localScratch(resolved));
  }

  async channelFor(agentId: string, adapterId: string, offlineWaitMs: number, signal?: AbortSignal, feature?: string): Promise<CallChannel> {
    return (await this.sessionFor(agentId, adapterId, offlineWaitMs, signal, feature)).session.calls;
  }

  /**
   * Direct uploads (issue 48 scope 3): null when the agent's hello does not offer them (an older agent: the engine
   * relays and says so in the run's log); fails naming the package when the agent lacks a destination's storage adapter.
   */
  async directDump(resolved: ResolvedAdapterConfig & { agentId: string }, request: DirectDumpRequest, options: RemoteSourceOptions = {}): Promise<DirectDumpCall | null> {
    const { session, agentName } = await this.sessionFor(resolved.agentId, resolved.adapterId, options.offlineWaitMs ?? this.waitMs, request.signal);
    if (!session.features.includes('direct') || !session.sealKey) return null;
    if (Buffer.from(session.sealKey, 'base64url').length !== 32) {
      throw new AdapterError(`source-${resolved.adapterId}`, 'CONFIG', `agent "${agentName}" sent a seal key that is not a 32-byte X25519 key: no secret is sent to it (reconnect or upgrade the agent)`);
    }
    for (const destination of request.destinations) {
      const packageName = this.registry().get('storage', destination.resolved.adapterId)?.origin.packageName ?? `@holdfast/storage-${destination.resolved.adapterId}`;
      if (!session.storageAdapters.includes(packageName)) {
        throw new AdapterError(`storage-${destination.resolved.adapterId}`, 'CONFIG', `agent "${agentName}" cannot upload to destination "${destination.resolved.name}" directly: it does not have the storage adapter package ${packageName} (install it next to the agent and restart it, or set the destination to relay)`);
      }
    }
    const source = this.source(resolved, options);
    const runLog = (level: 'info' | 'warn' | 'error', message: string) => (source as RemoteSource).adapterLogLine('directDump', level, message);
    return startDirectDump({ agentId: resolved.agentId, sealKey: session.sealKey, channel: session.calls, resolved, request, onLog: runLog });
  }

  private async sessionFor(agentId: string, adapterId: string, offlineWaitMs: number, signal?: AbortSignal, feature?: string): Promise<{ session: AgentSession; agentName: string }> {
    const origin = `source-${adapterId}`;
    const agent = await this.store.find(agentId);
    if (!agent) throw new AdapterError(origin, 'CONFIG', `agent ${agentId} not found`);
    if (agent.status === 'revoked') throw new AdapterError(origin, 'CONFIG', `agent "${agent.name}" is revoked`);
    const deadline = Date.now() + offlineWaitMs;
    let session = this.endpoint.readySession(agentId);
    while (!session) {
      if (signal?.aborted) throw new AdapterError(origin, 'ABORTED', 'cancelled');
      if (Date.now() >= deadline) {
        const waited = offlineWaitMs > 0 ? ` (waited ${Math.round(offlineWaitMs / 1000)} s for it to connect)` : '';
        throw new AdapterError(origin, 'TRANSIENT', `agent "${agent.name}" is offline${waited}`);
      }
      await sleep(Math.min(WAIT_POLL_MS, Math.max(1, deadline - Date.now())));
      session = this.endpoint.readySession(agentId);
    }
    const packageName = this.registry().get('source', adapterId)?.origin.packageName;
    if (packageName && !session.adapters.includes(packageName)) {
      throw new AdapterError(origin, 'CONFIG', `agent "${agent.name}" cannot run this source: it does not have the adapter package ${packageName} (install it next to the agent and restart it)`);
    }
    if (feature && !session.features.includes(feature)) {
      throw new AdapterError(origin, 'UNSUPPORTED', `agent "${agent.name}" (version ${agent.version ?? 'unknown'}) does not answer ${feature} calls: upgrade it to this server's version`);
    }
    this.logger.debug?.({ agentId, adapterId }, 'call routed to agent');
    return { session, agentName: agent.name };
  }
}
