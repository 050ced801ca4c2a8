import type { AnyAdapterDefinition } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { credentialsByRole } from '../credentials/credential-store.js';
import type { CatalogDeps } from '../shared/deps.js';
import { isPointInTimeSource } from '../shared/point-in-time-readiness.js';
import { AgentBindingRefused } from './agent-binding.js';

type CredentialRefs = { primaryCredentialId?: string | null; sshCredentialId?: string | null };

/**
 * Point-in-time recovery is not offered through remote agents (docs/agents.md): the change-log stream
 * (pg_receivewal, the binlog reader) runs on the server, connected to the database for as long as the job exists, and
 * would reach the server's own `127.0.0.1`, not the agent's. A source in a point-in-time mode bound to an agent would
 * be saved as a point-in-time source that never streams, so the combination is refused (422) before anything is
 * saved: on create and update, whichever of the two (the binding or the mode) comes second. Answered from the config;
 * nothing is contacted.
 */
export async function refusePointInTimeOnAgent(
  deps: CatalogDeps,
  em: EntityManager,
  source: { name: string; definition: AnyAdapterDefinition; config: Record<string, unknown>; refs: CredentialRefs & { agentId?: string | null } },
): Promise<void> {
  if (!source.refs.agentId || source.definition.kind !== 'source') return;
  const credentials = await credentialsByRole(em, deps.box(), source.refs);
  if (!(await isPointInTimeSource(deps, { name: source.name, definition: source.definition, config: source.config, credentials }))) return;
  throw new AgentBindingRefused(
    `source "${source.name}" is in a point-in-time mode, which is not offered through a remote agent (its change-log stream runs on the server); switch the mode off to run it on the agent, or leave agentId null`,
  );
}
