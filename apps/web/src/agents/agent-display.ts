/** What the agents page shows of an agent, kept apart from the page so it is tested without a browser. */

export interface AgentSummary {
  id: string;
  name: string;
  enabled: boolean;
  status: 'pending' | 'offline' | 'online' | 'revoked';
  version: string | null;
  host: string | null;
  adapters: string[];
  enrollmentExpiresAt: string | null;
  lastSeenAt: string | null;
}

export type AgentState = 'pending' | 'online' | 'offline' | 'disabled' | 'revoked';

/**
 * The one state a row shows. The API keeps `enabled` apart from the connection status; a disabled agent is refused
 * at every connection, so "disabled" says more than its (always offline or pending) status. Revoked wins over all.
 */
export function agentState(agent: Pick<AgentSummary, 'status' | 'enabled'>): AgentState {
  if (agent.status === 'revoked') return 'revoked';
  if (!agent.enabled) return 'disabled';
  return agent.status;
}

export const STATE_COLORS: Record<AgentState, string> = {
  pending: 'indigo',
  online: 'green',
  offline: 'red',
  disabled: 'gray',
  revoked: 'gray',
};

/** The state directory the shown command uses: the one docs/agents.md installs. */
export const DEFAULT_STATE_DIR = '/var/lib/holdfast-agent';

/** Quotes a word for a POSIX shell only when it needs it (a server URL or token normally does not). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The commands that pair an agent on its host: a private state directory, then `holdfast agent` with the token in
 * HOLDFAST_AGENT_TOKEN (an environment variable stays out of the process list other users can read).
 */
export function pairingCommand(serverUrl: string, token: string, stateDir = DEFAULT_STATE_DIR): string {
  const dir = shellWord(stateDir);
  return [`install -d -m 700 ${dir}`, `HOLDFAST_AGENT_TOKEN=${shellWord(token)} holdfast agent --server ${shellWord(serverUrl)} --state-dir ${dir}`].join('\n');
}

/** Agents a source may run on: every agent that is not revoked (a disabled or offline one may come back). */
export function selectableAgents<T extends Pick<AgentSummary, 'status'>>(agents: readonly T[]): T[] {
  return agents.filter((agent) => agent.status !== 'revoked');
}

/** Actions a row offers, by state: a revoked agent offers none, a new token only before enrollment. */
export function agentActions(agent: Pick<AgentSummary, 'status' | 'enabled'>): {
  rename: boolean;
  newToken: boolean;
  disable: boolean;
  enable: boolean;
  revoke: boolean;
} {
  const revoked = agent.status === 'revoked';
  return {
    rename: !revoked,
    newToken: agent.status === 'pending',
    disable: !revoked && agent.enabled,
    enable: !revoked && !agent.enabled,
    revoke: !revoked,
  };
}

/** The "Run on" choice that means the server itself (a source's `agentId: null`). */
export const THIS_SERVER = 'this-server';

/**
 * The "Run on" options of a source: this server first, then every agent that is not revoked, with its state so a
 * choice of an offline agent is made knowingly. A source bound to an agent that is no longer listed (revoked, or the
 * caller cannot read agents) keeps that binding as an option, so saving the form does not drop it silently.
 */
export function runOnChoices(agents: readonly AgentSummary[], currentAgentId: string | null): Array<{ value: string; label: string }> {
  const choices = [
    { value: THIS_SERVER, label: 'This server' },
    ...selectableAgents(agents).map((agent) => ({
      value: agent.id,
      label: `Agent ${agent.name} (${agentState(agent)})`,
    })),
  ];
  if (currentAgentId && !choices.some((choice) => choice.value === currentAgentId)) {
    const known = agents.find((agent) => agent.id === currentAgentId);
    choices.push({
      value: currentAgentId,
      label: known ? `Agent ${known.name} (${agentState(known)})` : `Agent ${currentAgentId}`,
    });
  }
  return choices;
}

/** The `agentId` a "Run on" choice sends: null for this server. */
export function agentIdOfChoice(choice: string | null): string | null {
  return !choice || choice === THIS_SERVER ? null : choice;
}
