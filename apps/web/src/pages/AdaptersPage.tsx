import { Anchor, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'react-router';
import { ADAPTER_KINDS, ADAPTER_PERMISSIONS, adapterTypeOfPath, useAdapters, useAdapterTypes } from '../api/adapters';
import { useAuth } from '../auth/AuthProvider';
import { QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

/** Sources, destinations or channels (by URL): their configurations with health and adapter kind. */
export default function AdaptersPage() {
  const segment = useLocation().pathname.split('/')[1] ?? 'sources';
  const type = adapterTypeOfPath(segment);
  const kind = ADAPTER_KINDS[type];
  const auth = useAuth();
  const adapters = useAdapters(type);
  const types = useAdapterTypes();
  const displayName = (adapterId: string) => types.data?.find((entry) => entry.adapterId === adapterId && entry.type === type)?.displayName ?? adapterId;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{kind.plural}</Title>
        {auth.can(ADAPTER_PERMISSIONS[type].write) && (
          <Button component={Link} to={`/adapters/new/${type}`}>
            Add {kind.singular}
          </Button>
        )}
      </Group>
      <QueryState isPending={adapters.isPending} error={adapters.error} isEmpty={adapters.data?.length === 0} empty={`No ${kind.plural.toLowerCase()} yet.`}>
        <Table.ScrollContainer minWidth={500}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Health</Table.Th>
                <Table.Th>Last error</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {adapters.data?.map((adapter) => (
                <Table.Tr key={adapter.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/adapters/${adapter.id}`}>
                      {adapter.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{displayName(adapter.adapterId)}</Table.Td>
                  <Table.Td>
                    {/* Created with ONLINE by the API: until a check ran, that says nothing. */}
                    {adapter.lastHealthCheck ? <StatusBadge status={adapter.lastStatus} /> : <StatusBadge status="Not checked yet" />}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" lineClamp={1}>
                      {adapter.lastError ?? '—'}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
