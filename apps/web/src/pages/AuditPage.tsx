import { Group, Pagination, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { formatDate } from '../components/format';
import { QueryState } from '../components/PageState';

const PAGE_SIZE = 25;

export default function AuditPage() {
  const [page, setPage] = useState(1);
  const audit = useQuery({
    queryKey: ['audit', page],
    queryFn: () => unwrap(api.GET('/api/audit', { params: { query: { page, pageSize: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Stack>
      <Title order={2}>Audit log</Title>
      <QueryState isPending={audit.isPending} error={audit.error} isEmpty={audit.data?.entries.length === 0} empty="No audit entries yet.">
        <Table.ScrollContainer minWidth={720}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time</Table.Th>
                <Table.Th>Action</Table.Th>
                <Table.Th>Resource</Table.Th>
                <Table.Th>Details</Table.Th>
                <Table.Th>Address</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {audit.data?.entries.map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{formatDate(entry.createdAt)}</Table.Td>
                  <Table.Td>{entry.action}</Table.Td>
                  <Table.Td>
                    {entry.resource}
                    {entry.resourceId ? ` ${entry.resourceId.slice(0, 8)}` : ''}
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" lineClamp={2} ff="monospace">
                      {entry.details ?? '—'}
                    </Text>
                  </Table.Td>
                  <Table.Td>{entry.ipAddress ?? '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        <Group justify="flex-end">
          <Pagination total={Math.max(1, Math.ceil((audit.data?.total ?? 0) / PAGE_SIZE))} value={page} onChange={setPage} aria-label="Audit pages" getControlProps={(control) => ({ 'aria-label': `${control} page` })} />
        </Group>
      </QueryState>
    </Stack>
  );
}
