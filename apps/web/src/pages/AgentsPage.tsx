import { Alert, Button, Code, CopyButton, Group, Modal, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { agentActions, agentState, healthSummary, pairingCommand, STATE_COLORS, type AgentHealthReport, type AgentSummary } from '../agents/agent-display';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { formatDate } from '../components/format';

/** How often the list is read again, so an agent that connects or drops shows without a reload. */
const REFRESH_MS = 5_000;

interface Issued {
  name: string;
  token: string;
  expiresAt: string;
}

function CopyField({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      <Group gap="xs" wrap="nowrap" align="flex-start">
        <Code block style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap', flex: 1 }} data-testid={testId}>
          {value}
        </Code>
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Button size="xs" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
              {copied ? 'Copied' : 'Copy'}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}

/** The agent's latest health report: a few short lines, warnings first; when it was received shows as the cell's title. */
function HealthCell({ health }: { health: AgentHealthReport | null | undefined }) {
  const { lines, warnings } = healthSummary(health);
  if (!health) return <Text size="sm">—</Text>;
  return (
    <Stack gap={0} title={`Reported ${formatDate(health.reportedAt)}`}>
      {warnings.map((warning) => (
        <Text key={warning} size="xs" c="red" fw={600} data-testid="agent-health-warning">
          {warning}
        </Text>
      ))}
      {lines.map((line) => (
        <Text key={line} size="xs">
          {line}
        </Text>
      ))}
    </Stack>
  );
}

/** The one-time token of a new (or re-issued) pairing, with the command to run on the agent's host. */
function IssuedToken({ issued, onClose }: { issued: Issued; onClose(): void }) {
  return (
    <Alert
      color="green"
      title={`Enrollment token for "${issued.name}"`}
      withCloseButton
      onClose={onClose}
      data-testid="agent-token"
      styles={{ title: { color: 'var(--mantine-color-text)' } }}
    >
      <Stack gap="sm">
        <span>
          Copy it now: it is shown only once and works once, until <strong data-testid="agent-token-expiry">{formatDate(issued.expiresAt)}</strong>. Run the commands below on the
          host next to the data (with the <Code>holdfast</Code> command line installed).
        </span>
        <CopyField label="Token" value={issued.token} testId="agent-token-value" />
        <CopyField label="Command" value={pairingCommand(window.location.origin, issued.token)} testId="agent-command" />
      </Stack>
    </Alert>
  );
}

function RenameModal({ agent, onClose }: { agent: AgentSummary; onClose(): void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(agent.name);
  const rename = useMutation({
    mutationFn: (next: string) =>
      unwrap(
        api.PATCH('/api/agents/{id}', {
          params: { path: { id: agent.id } },
          body: { name: next },
        })
      ),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['agents'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Rename ${agent.name}`}>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (name.trim()) rename.mutate(name.trim());
        }}
      >
        <Stack>
          {rename.error && <ErrorAlert error={rename.error} title="Rename refused" />}
          <TextInput
            label="New name"
            required
            value={name}
            error={name.trim() ? undefined : 'Enter a name'}
            onChange={(event) => setName(event.currentTarget.value)}
            data-field="agent-new-name"
            data-autofocus
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={rename.isPending} disabled={!name.trim()} data-testid="agent-rename-save">
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** Remote agents (issue 48): pair one (its one-time token and command), watch status, rename, disable, revoke. */
export default function AgentsPage() {
  const queryClient = useQueryClient();
  const auth = useAuth();
  const mayWrite = auth.can('agents:write');
  const agents = useQuery({
    queryKey: ['agents'],
    queryFn: () => unwrap(api.GET('/api/agents')),
    refetchInterval: REFRESH_MS,
  });
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  const [issued, setIssued] = useState<Issued | null>(null);
  const [renaming, setRenaming] = useState<AgentSummary | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['agents'] });
  const create = useMutation({
    mutationFn: (agentName: string) => unwrap(api.POST('/api/agents', { body: { name: agentName } })),
    onSuccess: async (answer) => {
      setIssued({
        name: answer.agent.name,
        token: answer.enrollmentToken,
        expiresAt: answer.expiresAt,
      });
      setName('');
      await invalidate();
    },
  });
  const newToken = useMutation({
    mutationFn: (id: string) =>
      unwrap(
        api.POST('/api/agents/{id}/enrollment-token', {
          params: { path: { id } },
          body: {},
        })
      ),
    onSuccess: async (answer) => {
      setIssued({
        name: answer.agent.name,
        token: answer.enrollmentToken,
        expiresAt: answer.expiresAt,
      });
      await invalidate();
    },
  });
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) =>
      unwrap(
        api.PATCH('/api/agents/{id}', {
          params: { path: { id } },
          body: { enabled },
        })
      ),
    onSuccess: invalidate,
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/agents/{id}', { params: { path: { id } } })),
    onSuccess: invalidate,
  });
  const failure = create.error ?? newToken.error ?? toggle.error ?? revoke.error;
  const list = agents.data?.agents ?? [];
  return (
    <Stack>
      <Title order={2}>Agents</Title>
      <Text c="dimmed" size="sm">
        An agent runs next to data this server cannot reach and keeps one outbound connection to it. Pair one here, then start it on its host with the token shown once.
      </Text>
      {issued && <IssuedToken issued={issued} onClose={() => setIssued(null)} />}
      {failure && <ErrorAlert error={failure} title="The change was refused" />}
      {mayWrite && (
        <Paper withBorder p="md">
          <form
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              if (!name.trim()) {
                setNameError('Enter a name');
                return;
              }
              setNameError(undefined);
              create.mutate(name.trim());
            }}
          >
            <Group align="flex-end">
              <TextInput
                label="Agent name"
                description="Names the host or site, e.g. warehouse-db"
                required
                value={name}
                error={nameError}
                onChange={(event) => setName(event.currentTarget.value)}
                style={{ flex: 1, minWidth: 220 }}
                data-field="agent-name"
              />
              <Button type="submit" loading={create.isPending} data-testid="agent-create">
                Pair an agent
              </Button>
            </Group>
          </form>
        </Paper>
      )}
      <QueryState isPending={agents.isPending} error={agents.error} isEmpty={list.length === 0} empty="No agents yet.">
        <Table.ScrollContainer minWidth={1100}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Version</Table.Th>
                <Table.Th>Host</Table.Th>
                <Table.Th>Adapters</Table.Th>
                <Table.Th>Health</Table.Th>
                <Table.Th>Last seen</Table.Th>
                {mayWrite && <Table.Th>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((agent) => {
                const state = agentState(agent);
                const actions = agentActions(agent);
                return (
                  <Table.Tr key={agent.id} data-testid="agent-row" data-agent-name={agent.name}>
                    <Table.Td data-testid="agent-name">{agent.name}</Table.Td>
                    <Table.Td>
                      <ToneBadge color={STATE_COLORS[state]} data-status={state} data-testid="agent-state">
                        {state}
                      </ToneBadge>
                      {agent.status === 'pending' && agent.enrollmentExpiresAt && (
                        <Text size="xs" c="dimmed">
                          token {Date.parse(agent.enrollmentExpiresAt) <= Date.now() ? 'expired' : `valid until ${formatDate(agent.enrollmentExpiresAt)}`}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td data-testid="agent-version">{agent.version ?? '—'}</Table.Td>
                    <Table.Td data-testid="agent-host">{agent.host ?? '—'}</Table.Td>
                    <Table.Td data-testid="agent-adapters">
                      {agent.adapters.length > 0 ? agent.adapters.map((adapter) => adapter.replace(/^@holdfast\/source-/, '')).join(', ') : '—'}
                    </Table.Td>
                    <Table.Td data-testid="agent-health">
                      <HealthCell health={agent.health} />
                    </Table.Td>
                    <Table.Td>{formatDate(agent.lastSeenAt)}</Table.Td>
                    {mayWrite && (
                      <Table.Td>
                        <Group gap={4} wrap="nowrap">
                          {actions.rename && (
                            <Button size="xs" variant="default" onClick={() => setRenaming(agent)} aria-label={`Rename ${agent.name}`} data-testid="agent-rename">
                              Rename
                            </Button>
                          )}
                          {actions.newToken && (
                            <Button size="xs" variant="default" onClick={() => newToken.mutate(agent.id)} aria-label={`New token for ${agent.name}`} data-testid="agent-new-token">
                              New token
                            </Button>
                          )}
                          {actions.disable && (
                            <Button
                              size="xs"
                              variant="default"
                              onClick={() => toggle.mutate({ id: agent.id, enabled: false })}
                              aria-label={`Disable ${agent.name}`}
                              data-testid="agent-disable"
                            >
                              Disable
                            </Button>
                          )}
                          {actions.enable && (
                            <Button
                              size="xs"
                              variant="default"
                              onClick={() => toggle.mutate({ id: agent.id, enabled: true })}
                              aria-label={`Enable ${agent.name}`}
                              data-testid="agent-enable"
                            >
                              Enable
                            </Button>
                          )}
                          {actions.revoke && (
                            <Button
                              size="xs"
                              color="red"
                              variant="outline"
                              aria-label={`Revoke ${agent.name}`}
                              data-testid="agent-revoke"
                              onClick={() =>
                                window.confirm(`Revoke the agent "${agent.name}"? Its connection closes at once and it can never connect again.`) && revoke.mutate(agent.id)
                              }
                            >
                              Revoke
                            </Button>
                          )}
                        </Group>
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
      {renaming && <RenameModal agent={renaming} onClose={() => setRenaming(null)} />}
    </Stack>
  );
}
