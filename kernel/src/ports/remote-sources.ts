import type { InjectionToken } from 'tsyringe';
import type { Readable } from 'node:stream';
import type { DumpStats, SourceAdapter } from '../contracts/source.js';
import type { StreamDigests } from '../streams/hashing.js';
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
  /**
   * Direct uploads (issue 48 scope 3): runs dump, compression, encryption, hashing and the uploads to
   * `request.destinations` on the agent, which receives those destinations' settings sealed to its connection key
   * for this call only. Resolves once the dump started; null when the agent does not offer direct uploads (an older
   * version), so the caller relays instead.
   */
  directDump?(resolved: ResolvedAdapterConfig & { agentId: string }, request: DirectDumpRequest, options?: RemoteSourceOptions): Promise<DirectDumpCall | null>;
}

/** A destination the agent uploads to itself (issue 48 scope 3), with its decrypted settings for that run only. */
export interface DirectUploadDestination {
  resolved: ResolvedAdapterConfig;
  /** The object lock date to write the backup with (destinations that lock). */
  retainUntil?: Date;
}

/** What {@link RemoteSourceRunner.directDump} runs on the agent: the whole stored-stream pipeline. */
export interface DirectDumpRequest {
  databases: string[];
  engineOptions: Record<string, unknown>;
  /** The job's compression codec and tuning, applied on the agent with the engine's own codec code. */
  codec: string;
  compression: { level: number | null; threads: number | null };
  /** The job's symmetric key, or its public-key recipient; sealed to the agent with the destinations. */
  encryptionKey: Buffer | null;
  recipient: string | null;
  /** The destinations the agent uploads to itself. */
  destinations: DirectUploadDestination[];
  /** True when some destinations are relayed: the agent also streams the processed bytes to the server. */
  relay: boolean;
  signal: AbortSignal;
  /** Plaintext bytes read from the source so far (the run's progress). */
  onBytes(bytes: number): void;
}

/** How one direct destination ended on the agent. */
export interface DirectUploadOutcome {
  configId: string;
  ok: boolean;
  size?: number;
  error?: string;
}

/** The agent's account of a direct dump: the source's stats, the stored stream's digests and encryption header. */
export interface DirectDumpResult {
  stats: DumpStats;
  digests: StreamDigests;
  /** The sidecar's `encryption` block without the profile id (null: not encrypted). */
  encryption: Record<string, unknown> | null;
  outcomes: DirectUploadOutcome[];
}

/** A direct dump that started on the agent: it waits for its object key before it uploads anything. */
export interface DirectDumpCall {
  /** The source's dump extension (`.sql`, `.tar`), for the key. */
  extension: string;
  /** The processed bytes for the relayed destinations (ends at once when there are none). */
  relay: Readable;
  /** Lets the agent start its uploads under `key`. */
  start(key: string): void;
  result: Promise<DirectDumpResult>;
}

/** Optional token: registered by the agents plugin; absent, a source bound to an agent cannot run. */
export const REMOTE_SOURCE_RUNNER = Symbol.for('holdfast:remote-source-runner') as InjectionToken<RemoteSourceRunner>;
