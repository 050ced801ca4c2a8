import { describe, expect, it } from 'vitest';
import { agentActions, agentIdOfChoice, agentState, pairingCommand, runOnChoices, selectableAgents, shellWord, THIS_SERVER } from '../src/agents/agent-display.js';
import { permissionForPath } from '../src/auth/permissions.js';

describe('agents page helpers (issue 48, acceptance 5)', () => {
  it('shows disabled over the connection status and revoked over everything', () => {
    expect(agentState({ status: 'online', enabled: true })).toBe('online');
    expect(agentState({ status: 'offline', enabled: true })).toBe('offline');
    expect(agentState({ status: 'pending', enabled: true })).toBe('pending');
    expect(agentState({ status: 'offline', enabled: false })).toBe('disabled');
    expect(agentState({ status: 'pending', enabled: false })).toBe('disabled');
    expect(agentState({ status: 'revoked', enabled: false })).toBe('revoked');
  });

  it('offers a new token only before enrollment and nothing for a revoked agent', () => {
    expect(agentActions({ status: 'pending', enabled: true })).toEqual({
      rename: true,
      newToken: true,
      disable: true,
      enable: false,
      revoke: true,
    });
    expect(agentActions({ status: 'online', enabled: true })).toEqual({
      rename: true,
      newToken: false,
      disable: true,
      enable: false,
      revoke: true,
    });
    expect(agentActions({ status: 'offline', enabled: false })).toEqual({
      rename: true,
      newToken: false,
      disable: false,
      enable: true,
      revoke: true,
    });
    expect(Object.values(agentActions({ status: 'revoked', enabled: false })).some(Boolean)).toBe(false);
  });

  it('builds the pairing command with the token in HOLDFAST_AGENT_TOKEN and a private state directory', () => {
    const command = pairingCommand('https://backups.example.com', 'hfa_enroll_abc-DEF_123');
    expect(command.split('\n')).toEqual([
      'install -d -m 700 /var/lib/holdfast-agent',
      'HOLDFAST_AGENT_TOKEN=hfa_enroll_abc-DEF_123 holdfast agent --server https://backups.example.com --state-dir /var/lib/holdfast-agent',
    ]);
    expect(command).not.toContain('--token');
  });

  it('quotes words a shell would split or expand', () => {
    expect(shellWord('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(shellWord('/srv/my agent')).toBe("'/srv/my agent'");
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
    expect(pairingCommand('http://h', 't', '/a b')).toContain("--state-dir '/a b'");
  });

  it('lets a source run on any agent that is not revoked', () => {
    const agents = [
      { id: 'a', status: 'online' as const },
      { id: 'b', status: 'revoked' as const },
      { id: 'c', status: 'pending' as const },
      { id: 'd', status: 'offline' as const },
    ];
    expect(selectableAgents(agents).map((agent) => agent.id)).toEqual(['a', 'c', 'd']);
  });

  it('guards the page with agents:read', () => {
    expect(permissionForPath('/agents')).toBe('agents:read');
  });
});

describe('the source form "Run on" choice', () => {
  const agent = (id: string, status: 'pending' | 'online' | 'offline' | 'revoked', enabled = true) => ({
    id,
    name: `n-${id}`,
    enabled,
    status,
    version: null,
    host: null,
    adapters: [],
    enrollmentExpiresAt: null,
    lastSeenAt: null,
  });

  it('offers this server first and every agent that is not revoked, with its state', () => {
    const choices = runOnChoices([agent('a', 'online'), agent('b', 'revoked'), agent('c', 'offline', false)], null);
    expect(choices).toEqual([
      { value: THIS_SERVER, label: 'This server' },
      { value: 'a', label: 'Agent n-a (online)' },
      { value: 'c', label: 'Agent n-c (disabled)' },
    ]);
  });

  it('keeps a current binding the list no longer offers, so saving does not drop it', () => {
    expect(runOnChoices([agent('b', 'revoked')], 'b').at(-1)).toEqual({
      value: 'b',
      label: 'Agent n-b (revoked)',
    });
    expect(runOnChoices([], 'zz').at(-1)).toEqual({
      value: 'zz',
      label: 'Agent zz',
    });
  });

  it('sends null for this server and the agent id otherwise', () => {
    expect(agentIdOfChoice(THIS_SERVER)).toBeNull();
    expect(agentIdOfChoice(null)).toBeNull();
    expect(agentIdOfChoice('a')).toBe('a');
  });
});
