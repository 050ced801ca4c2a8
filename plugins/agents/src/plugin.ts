import { instantiateAdapter, optionalToken, REMOTE_SOURCE_RUNNER, TOKENS, type AuditEntry, type HoldfastPlugin, type KernelLogger, type ResolvedAdapterConfig, type SourceAdapter } from '@holdfast/kernel';
import { AgentSourceRunner, agentWaitFromEnv } from './calls/remote-source-runner.js';
import { ORM_DATABASE } from '@holdfast/orm-port';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { AgentStore } from './agent-store.js';
import { AgentEndpoint, DEFAULT_ENDPOINT_OPTIONS, type AgentEndpointOptions } from './connection/agent-endpoint.js';
import { enrollmentTtlFromEnv } from './enrollment-token.js';
import { agentRoutes } from './routes/agent-routes.js';
import { AgentEntity } from './store/entities.js';
import { addAgentHealth, addAgentHolder, createAgentsTable } from './store/migration.js';

/** The running agents services (tests reach them through {@link AGENTS}). */
export interface AgentsService {
  store: AgentStore;
  endpoint: AgentEndpoint;
  /** Runs sources bound to an agent (registered as `REMOTE_SOURCE_RUNNER`). */
  runner: AgentSourceRunner;
}

export const AGENTS = Symbol.for('holdfast:agents') as InjectionToken<AgentsService>;

/** Options of {@link createAgentsPlugin}. */
export interface AgentsPluginOptions {
  /** Environment to read `HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS` from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Enrollment token lifetime; overrides the environment. */
  enrollmentTtlMs?: number;
  /** Handshake time, ping period, handshake budget (tests shorten the ping period). */
  endpoint?: Partial<AgentEndpointOptions>;
  /** How long a run waits for an offline agent; overrides `HOLDFAST_AGENT_WAIT_SECONDS` (default 60 s). */
  agentWaitMs?: number;
}

/**
 * The remote agents plugin (issue 48, scopes 1 and 2): the `agents` table, `/api/agents` routes and the agents'
 * WebSocket endpoint at `/api/agents/connect` on the server's own listener. Needs the database, the event bus
 * (`agent_online` / `agent_offline`) and the logger; audits through `TOKENS.AuditWriter` when present.
 */
export function createAgentsPlugin(options: AgentsPluginOptions = {}): HoldfastPlugin {
  // Read at creation: a bad value stops the start with a message naming the variable.
  const ttlMs = options.enrollmentTtlMs ?? enrollmentTtlFromEnv(options.env ?? process.env);
  const waitMs = options.agentWaitMs ?? agentWaitFromEnv(options.env ?? process.env);
  let service: AgentsService | undefined;

  const serviceOf = (container: DependencyContainer): AgentsService => {
    if (service) return service;
    const base = container.resolve(TOKENS.Logger);
    const logger: KernelLogger = base.child?.({ plugin: 'agents' }) ?? base;
    const store = new AgentStore(() => container.resolve(ORM_DATABASE), ttlMs);
    const endpoint = new AgentEndpoint(store, () => container.resolve(TOKENS.EventBus), logger, { ...DEFAULT_ENDPOINT_OPTIONS, ...options.endpoint });
    const localSource = (resolved: ResolvedAdapterConfig): SourceAdapter =>
      instantiateAdapter(container, container.resolve(TOKENS.AdapterRegistry).require('source', resolved.adapterId).definition, resolved.config, {
        instanceId: resolved.configId,
        instanceName: resolved.name,
        logger,
        credentials: resolved.credentials,
      }) as SourceAdapter;
    const runner = new AgentSourceRunner(store, endpoint, () => container.resolve(TOKENS.AdapterRegistry), waitMs, logger, localSource);
    service = { store, endpoint, runner };
    return service;
  };

  const auditOf = (container: DependencyContainer, logger: KernelLogger) => async (entry: AuditEntry) => {
    try {
      if (container.isRegistered(TOKENS.AuditWriter, true)) return await container.resolve(TOKENS.AuditWriter).write(entry);
      // Never silently lost: without identity the entry goes to the log.
      logger.info({ audit: entry }, 'audit entry (no audit writer registered)');
    } catch (error) {
      logger.warn({ action: entry.action, err: (error as Error).message }, 'audit entry could not be written');
    }
  };

  return {
    name: 'agents',
    provides: [AGENTS, REMOTE_SOURCE_RUNNER],
    requires: [ORM_DATABASE, TOKENS.EventBus, TOKENS.Logger, TOKENS.AdapterRegistry, optionalToken(TOKENS.AuditWriter)],
    entities: [AgentEntity],
    migrations: [createAgentsTable, addAgentHolder, addAgentHealth],
    register(container) {
      container.register(AGENTS, { useFactory: serviceOf });
      container.register(REMOTE_SOURCE_RUNNER, { useFactory: (resolver) => serviceOf(resolver).runner });
    },
    routes(container) {
      const { store, endpoint } = serviceOf(container);
      const write = auditOf(container, endpoint.logger);
      return agentRoutes({
        store,
        disconnect: (agentId, code, reason) => endpoint.disconnect(agentId, code, reason),
        audit: (request, action, agentId, details) =>
          write({ userId: request.auth?.userId ?? null, action, resource: 'agent', resourceId: agentId, details, ipAddress: request.ip, userAgent: request.userAgent ?? null }),
      });
    },
    upgrades(container) {
      return [serviceOf(container).endpoint];
    },
    async start(container) {
      const { store, endpoint } = serviceOf(container);
      const cleared = await store.clearStalePresence(endpoint.staleAfterMs, true);
      if (cleared > 0) endpoint.logger.info({ agents: cleared }, 'agents left online by the previous run marked offline');
      endpoint.start();
    },
    async stop() {
      // The composition closed the connections before the listener stopped (closeAll); this is for compositions without HTTP.
      await service?.endpoint.closeAll();
    },
  };
}
