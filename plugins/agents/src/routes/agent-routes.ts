import { defineRoute, lineText, routeResult, type RouteDefinition, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import type { AgentStore, AgentView } from '../agent-store.js';
import { CLOSE } from '../protocol.js';

const TAGS = ['agents'];

const errorSchema = z.object({ error: z.string(), issues: z.unknown().optional(), details: z.unknown().optional() });
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (the issues name the field)',
  401: 'Not authenticated',
  403: 'Missing permission',
  404: 'Agent not found',
  409: 'Name taken, or the agent is revoked',
};
const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, { description: ERROR_DESCRIPTIONS[status] ?? 'Error', schema: errorSchema }]));

const bytes = z.number().int();
const agentHealthSchema = z
  .object({
    reportedAt: z.string().describe('When the server received this report'),
    uptimeSeconds: z.number().describe('Seconds the agent process has run'),
    hostUptimeSeconds: z.number(),
    loadAverage: z.array(z.number()).describe('1, 5 and 15 minute load averages'),
    cpus: z.number().int(),
    memory: z.object({ totalBytes: bytes, freeBytes: bytes, processRssBytes: bytes }),
    stateDisk: z.object({ totalBytes: bytes, freeBytes: bytes }).nullable().describe("The filesystem of the agent's state directory"),
    node: z.string(),
    platform: z.string(),
    tools: z.array(z.object({ name: z.string(), version: z.string() })).describe('Dump tools found on the agent, with their version'),
  })
  .nullable()
  .describe('The latest health report (sent at connection and every 60 s); null before the first or from an agent older than this feature');

export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  status: z.enum(['pending', 'offline', 'online', 'revoked']),
  publicKey: z.string().nullable().describe('Ed25519 public key (raw 32 bytes, base64url) once enrolled'),
  version: z.string().nullable(),
  host: z.string().nullable(),
  adapters: z.array(z.string()).describe('Source adapter packages the agent reported it can load'),
  health: agentHealthSchema,
  enrollmentExpiresAt: z.string().nullable().describe('When the outstanding enrollment token expires; null when none is outstanding'),
  lastSeenAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const withToken = z.object({
  agent: agentSchema,
  enrollmentToken: z.string().describe('One-time token for `holdfast agent --token`; shown once, stored hashed'),
  expiresAt: z.string(),
});

const agentName = lineText({ min: 1, max: 100 }).regex(/\S/, 'must not be blank').describe('Unique among agents that are not revoked');
const idParams = z.strictObject({ id: lineText({ min: 1, max: 64 }) });

/** What the routes need besides the store: the live connections, and the audit trail. */
export interface AgentRouteDeps {
  store: AgentStore;
  /** Closes the agent's live connection at once; resolves once it is recorded offline. */
  disconnect(agentId: string, code: number, reason: string): Promise<boolean>;
  audit(request: RouteRequest, action: string, agentId: string, details: Record<string, unknown>): Promise<void>;
}

const tokenAnswer = (status: number, issued: { agent: AgentView; token: string }) =>
  routeResult({
    status,
    // The token is a credential: no cache may keep the answer.
    headers: { 'Cache-Control': 'no-store' },
    body: { agent: issued.agent, enrollmentToken: issued.token, expiresAt: issued.agent.enrollmentExpiresAt },
  });

/** `/api/agents`: create (with a one-time enrollment token), list, show, rename/enable/disable, new token, revoke. */
export function agentRoutes(deps: AgentRouteDeps): RouteDefinition[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/agents',
      summary: 'Create an agent; the answer carries its one-time enrollment token (shown once)',
      tags: TAGS,
      access: { permission: 'agents:write' },
      request: { body: z.strictObject({ name: agentName }) },
      responses: { 201: { description: 'The pending agent and its enrollment token', schema: withToken }, ...errorResponses(400, 401, 403, 409) },
      handler: async (request) => {
        const issued = await store.create(request.body.name);
        await deps.audit(request, 'agent.create', issued.agent.id, { name: issued.agent.name });
        return tokenAnswer(201, issued);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/agents',
      summary: 'List agents with their status',
      tags: TAGS,
      access: { permission: 'agents:read' },
      responses: { 200: { description: 'Agents, oldest first', schema: z.object({ agents: z.array(agentSchema) }) }, ...errorResponses(401, 403) },
      handler: async () => ({ agents: await store.list() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/agents/:id',
      summary: 'One agent',
      tags: TAGS,
      access: { permission: 'agents:read' },
      request: { params: idParams },
      responses: { 200: { description: 'The agent', schema: agentSchema }, ...errorResponses(400, 401, 403, 404) },
      handler: async (request) => store.get(request.params.id),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/agents/:id',
      summary: 'Rename, enable or disable an agent (disabling closes its connection at once)',
      tags: TAGS,
      access: { permission: 'agents:write' },
      request: { params: idParams, body: z.strictObject({ name: agentName.optional(), enabled: z.boolean().optional() }) },
      responses: { 200: { description: 'The agent after the change', schema: agentSchema }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const { before, after: updated } = await store.update(request.params.id, request.body);
        const isCut = !updated.enabled && (await deps.disconnect(updated.id, CLOSE.disabled, 'agent disabled by an administrator'));
        const after = isCut ? await store.get(updated.id) : updated;
        const changed = Object.keys(request.body).filter((key) => (before as unknown as Record<string, unknown>)[key] !== (after as unknown as Record<string, unknown>)[key]);
        if (changed.length > 0) {
          const action = changed.includes('enabled') ? (after.enabled ? 'agent.enable' : 'agent.disable') : 'agent.update';
          await deps.audit(request, action, after.id, { name: after.name, fields: changed, ...(changed.includes('name') ? { previousName: before.name } : {}) });
        }
        return after;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/agents/:id/enrollment-token',
      summary: 'A new one-time enrollment token (pending agent, or re-pairing an enrolled one); replaces any outstanding token',
      tags: TAGS,
      access: { permission: 'agents:write' },
      request: { params: idParams, body: z.strictObject({}).optional() },
      responses: { 200: { description: 'The agent and its new enrollment token', schema: withToken }, ...errorResponses(400, 401, 403, 404, 409) },
      handler: async (request) => {
        const issued = await store.issueToken(request.params.id);
        await deps.audit(request, 'agent.enrollment-token', issued.agent.id, { name: issued.agent.name, rePairing: issued.agent.publicKey !== null });
        return tokenAnswer(200, issued);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/agents/:id',
      summary: 'Revoke an agent: its connection closes at once and its key is refused for ever',
      tags: TAGS,
      access: { permission: 'agents:write' },
      request: { params: idParams },
      responses: { 200: { description: 'The revoked agent (kept for the record; its name is free again)', schema: agentSchema }, ...errorResponses(400, 401, 403, 404) },
      handler: async (request) => {
        const { before, after } = await store.revoke(request.params.id);
        const wasConnected = await deps.disconnect(after.id, CLOSE.revoked, 'agent revoked: it can never connect again');
        if (before.status !== 'revoked') await deps.audit(request, 'agent.revoke', after.id, { name: after.name, wasConnected });
        return after;
      },
    }),
  ];
}
