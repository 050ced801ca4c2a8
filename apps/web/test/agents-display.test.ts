import { describe, expect, it } from 'vitest';
import { agentActions, agentIdOfChoice, agentState, healthSummary, pairingCommand, runOnChoices, selectableAgents, shellWord, THIS_SERVER, toolVersion } from '../src/agents/agent-display.js';
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

  it('sums up an agent health report in short lines and warns of a low disk or a high load', () => {
    const report = {
      reportedAt: '2026-12-07T12:00:00.000Z',
      uptimeSeconds: 30,
      hostUptimeSeconds: 3 * 86_400 + 5,
      loadAverage: [0.5, 0.25, 0.1],
      cpus: 4,
      memory: { totalBytes: 8 * 2 ** 30, freeBytes: 2 * 2 ** 30, processRssBytes: 2 ** 26 },
      stateDisk: { totalBytes: 100 * 2 ** 30, freeBytes: 40 * 2 ** 30 },
      node: 'v20.19.0',
      platform: 'linux x64',
      tools: [
        { name: 'pg_dump', version: 'pg_dump (PostgreSQL) 16.4 (Debian 16.4-1.pgdg120+1)' },
        { name: 'mariadb-dump', version: 'mariadb-dump from 11.4.3-MariaDB, client 10.19 for debian-linux-gnu (x86_64)' },
      ],
    };
    expect(healthSummary(report)).toEqual({
      lines: [
        'Disk 40.0 GiB free of 100.0 GiB (40%)',
        'Load 0.50 / 0.25 / 0.10 (4 CPUs)',
        'Memory 2.0 GiB free of 8.0 GiB',
        'Node v20.19.0 on linux x64, up 3 d',
        'Tools: pg_dump 16.4, mariadb-dump 11.4.3-MariaDB',
      ],
      warnings: [],
    });
    const strained = healthSummary({ ...report, loadAverage: [9, 6.5, 3], cpus: 1, stateDisk: { totalBytes: 100 * 2 ** 30, freeBytes: 5 * 2 ** 30 }, tools: [] });
    expect(strained.warnings).toEqual(['low disk: 5% free', 'high load: 6.50 on 1 CPU']);
    expect(strained.lines).not.toContainEqual(expect.stringMatching(/^Tools/));
    // No report (never connected, or an agent older than the feature), and a report without its disk.
    expect(healthSummary(null)).toEqual({ lines: [], warnings: [] });
    expect(healthSummary({ ...report, stateDisk: null }).lines[0]).toMatch(/^Load/);
    expect(toolVersion('redis-cli 7.2.4')).toBe('7.2.4');
    expect(toolVersion('weird')).toBe('weird');
  });
});
