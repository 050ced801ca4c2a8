export { createAgentsPlugin, AGENTS, type AgentsPluginOptions, type AgentsService } from './plugin.js';
export { AgentStore, type AgentView, type AgentStatus, type EnrollmentRefusal } from './agent-store.js';
export { AgentEndpoint, DEFAULT_ENDPOINT_OPTIONS, type AgentEndpointOptions } from './connection/agent-endpoint.js';
export { DEFAULT_ENROLLMENT_TTL_MS, ENROLLMENT_TOKEN_PREFIX, enrollmentTokenHash, enrollmentTtlFromEnv } from './enrollment-token.js';
export { agentRoutes, agentSchema } from './routes/agent-routes.js';
export { AgentEntity, type AgentRow } from './store/entities.js';
export { AGENTS_TABLE, createAgentsTable } from './store/migration.js';
export * from './protocol.js';
