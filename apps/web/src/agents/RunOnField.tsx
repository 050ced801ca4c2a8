import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { agentIdOfChoice, runOnChoices, THIS_SERVER } from './agent-display';

/**
 * A source's "Run on" choice (issue 48): this server, or one of the remote agents (GET /api/agents, revoked ones
 * left out). Without `agents:read` only this server and the source's current binding are offered.
 */
export function RunOnField({ agentId, onChange }: { agentId: string | null; onChange(agentId: string | null): void }) {
  const auth = useAuth();
  const mayRead = auth.can('agents:read');
  const agents = useQuery({
    queryKey: ['agents'],
    queryFn: () => unwrap(api.GET('/api/agents')),
    enabled: mayRead,
  });
  return (
    <Select
      label="Run on"
      description="Where backups, restores and connection tests of this source run: this server, or a remote agent next to the data"
      data={runOnChoices(agents.data?.agents ?? [], agentId)}
      value={agentId ?? THIS_SERVER}
      onChange={(choice) => onChange(agentIdOfChoice(choice))}
      allowDeselect={false}
      error={agents.error ? 'The agents could not be listed' : undefined}
      data-field="run-on"
    />
  );
}
