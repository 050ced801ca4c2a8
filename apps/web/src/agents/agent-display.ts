/** What the agents page shows of an agent, kept apart from the page so it is tested without a browser. */
import { formatBytes } from '../components/format';

/** The agent's latest health report (docs/agents.md "Agent health"). */
export interface AgentHealthReport {
  reportedAt: string;
  uptimeSeconds: number;
  hostUptimeSeconds: number;
  loadAverage: number[];
  cpus: number;
  memory: { totalBytes: number; freeBytes: number; processRssBytes: number };
  stateDisk: { totalBytes: number; freeBytes: number } | null;
  node: string;
  platform: string;
  tools: Array<{ name: string; version: string }>;
}

export interface AgentSummary {
  id: string;
  name: string;
  enabled: boolean;
  status: 'pending' | 'offline' | 'online' | 'revoked';
  version: string | null;
  host: string | null;
  adapters: string[];
  health?: AgentHealthReport | null;
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

/** Below this share of free space on the agent's state directory's disk, the page marks the disk as low. */
export const LOW_DISK_SHARE = 0.1;

/**
 * The health cell of an agent's row: one short line per fact, and whether something needs a look (the disk of its
 * state directory below {@link LOW_DISK_SHARE} free, or a load average above its CPU count). Empty for no report.
 */
export function healthSummary(health: AgentHealthReport | null | undefined): { lines: string[]; warnings: string[] } {
  if (!health) return { lines: [], warnings: [] };
  const warnings: string[] = [];
  const lines: string[] = [];
  if (health.stateDisk) {
    const { freeBytes, totalBytes } = health.stateDisk;
    const share = totalBytes > 0 ? freeBytes / totalBytes : 0;
    lines.push(`Disk ${formatBytes(freeBytes)} free of ${formatBytes(totalBytes)} (${Math.round(share * 100)}%)`);
    if (share < LOW_DISK_SHARE) warnings.push(`low disk: ${Math.round(share * 100)}% free`);
  }
  const [one = 0, five = 0, fifteen = 0] = health.loadAverage;
  lines.push(`Load ${one.toFixed(2)} / ${five.toFixed(2)} / ${fifteen.toFixed(2)} (${health.cpus} CPU${health.cpus === 1 ? '' : 's'})`);
  if (health.cpus > 0 && five > health.cpus) warnings.push(`high load: ${five.toFixed(2)} on ${health.cpus} CPU${health.cpus === 1 ? '' : 's'}`);
  lines.push(`Memory ${formatBytes(health.memory.freeBytes)} free of ${formatBytes(health.memory.totalBytes)}`);
  lines.push(`Node ${health.node} on ${health.platform}, up ${formatUptime(health.hostUptimeSeconds)}`);
  if (health.tools.length > 0) lines.push(`Tools: ${health.tools.map((tool) => `${tool.name} ${toolVersion(tool.version)}`).join(', ')}`);
  return { lines, warnings };
}

/** The version number of a `--version` line (`pg_dump (PostgreSQL) 16.4` -> `16.4`), else the line itself. */
export function toolVersion(line: string): string {
  return /\d+(?:\.\d+)+(?:[-.\w]*)?/.exec(line)?.[0] ?? line;
}

function formatUptime(seconds: number): string {
  if (seconds >= 86_400) return `${Math.floor(seconds / 86_400)} d`;
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 60)} min`;
}
