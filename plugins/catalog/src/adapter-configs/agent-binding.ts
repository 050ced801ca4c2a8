import { HttpError, REMOTE_SOURCE_RUNNER } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { AdapterConfigType } from './adapter-types.js';

/** 422: the request is well formed but `agentId` names no agent a source can run on. Nothing is saved. */
export class AgentBindingRefused extends HttpError {
  constructor(message: string) {
    super(422, `Invalid agentId: ${message}`, [{ path: 'body.agentId', message }]);
  }
}

const invalid = (message: string) => new AgentBindingRefused(message);

/**
 * A source may be bound to a remote agent (issue 48, docs/agents.md): only sources, only an agent that exists and is
 * not revoked, and only when the agents plugin runs (it registers `REMOTE_SOURCE_RUNNER`). A disabled or offline
 * agent is accepted: runs wait for it or fail naming it. Whether the agent has the source's adapter package is
 * checked when a run starts (its hello lists them and may change with each connection).
 */
export async function checkAgentBinding(container: DependencyContainer, type: AdapterConfigType, agentId: string | null | undefined): Promise<void> {
  if (agentId === undefined || agentId === null) return;
  if (type !== 'database') throw invalid('only sources can run on an agent');
  if (!container.isRegistered(REMOTE_SOURCE_RUNNER, true)) throw invalid('remote agents are not available on this server');
  const agent = await container.resolve(REMOTE_SOURCE_RUNNER).describeAgent(agentId);
  if (!agent) throw invalid(`agent ${agentId} not found`);
  if (agent.revoked) throw invalid(`agent "${agent.name}" is revoked`);
}
