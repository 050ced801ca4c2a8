import type { InjectionToken } from 'tsyringe';
import type { SourceAdapter } from '../contracts/source.js';
import type { KernelLogger } from '../logger.js';
import type { ResolvedAdapterConfig } from './catalog.js';

/** An agent as a source binding sees it (issue 48): enough to validate `agentId` and name it in messages. */
export interface RemoteAgentSummary {
  id: string;
  name: string;
  /** A revoked agent can never connect again: a source cannot be bound to it. */
  revoked: boolean;
}

/** Options of {@link RemoteSourceRunner.source}. */
export interface RemoteSourceOptions {
  logger?: KernelLogger;
  /**
   * How long a call waits for an offline agent to connect before it rejects naming the agent; default the server's
   * `HOLDFAST_AGENT_WAIT_SECONDS`. Connection tests pass 0: they report an offline agent at once.
   */
  offlineWaitMs?: number;
  /**
   * The run's log: the adapter's log lines on the agent (forwarded, limited in rate and size) are written here with
   * the prefix `agent: `, so a run through an agent shows what a local run's process log would.
   */
  runLog?: (level: 'info' | 'warn', message: string) => void;
}

/**
 * Runs source adapters on remote agents (the agents plugin implements it). The engine and the catalog stay free of a
 * dependency on that plugin: when a resolved source names an agent (`agentId`), they ask this port for an adapter
 * that forwards every call to the agent over its connection.
 */
export interface RemoteSourceRunner {
  /** The agent with this id, or null when there is none. */
  describeAgent(agentId: string): Promise<RemoteAgentSummary | null>;
  /**
   * A source adapter whose calls run on the agent `resolved.agentId`, with the same adapter package the server
   * would use. Calls wait a bounded time for an offline agent, then reject naming it; a call cut by the agent
   * dropping rejects with `interrupted: agent "<name>" disconnected during <method>`.
   */
  source(resolved: ResolvedAdapterConfig & { agentId: string }, options?: RemoteSourceOptions): SourceAdapter;
  /**
   * Several server processes on one PostgreSQL (docs/agents.md "Several server processes"): the engine tells the
   * runner its process id (`engine_processes.id`), which the runner records as the holder of the agents connected
   * to this process.
   */
  attachProcess?(processId: string): void;
  /**
   * The process id (as given to {@link attachProcess}) of the process holding the agent's live connection, or null
   * when no process is known to hold it (offline, or its holder stopped refreshing its presence).
   */
  holderOf?(agentId: string): Promise<string | null>;
}

/** Optional token: registered by the agents plugin; absent, a source bound to an agent cannot run. */
export const REMOTE_SOURCE_RUNNER = Symbol.for('holdfast:remote-source-runner') as InjectionToken<RemoteSourceRunner>;
