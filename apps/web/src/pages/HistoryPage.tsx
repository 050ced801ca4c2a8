import { Anchor, Group, Pagination, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { formatBytes, formatDate, formatDuration } from '../components/format';
import { QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

const PAGE_SIZE = 20;
const STATUSES = ['Pending', 'Running', 'Success', 'Partial', 'Failed', 'Cancelled'] as const;
const TYPES = ['Backup', 'Restore', 'IntegrityCheck', 'Verification'] as const;
const TRIGGERS = ['Manual', 'Scheduler', 'Api'] as const;

/** Every execution, filtered by status, type, trigger and text, paged on the server; facet counts in the filters. */
export default function HistoryPage() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<string | null>(null);
  const [type, setType] = useState<string | null>(null);
  const [trigger, setTrigger] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 300);
  const query = {
    page: String(page),
    pageSize: String(PAGE_SIZE),
    facets: 'true',
    ...(status ? { status } : {}),
    ...(type ? { type } : {}),
    ...(trigger ? { trigger } : {}),
    ...(debounced ? { search: debounced } : {}),
  };
  const history = useQuery({
    queryKey: ['history', query],
    queryFn: () => unwrap(api.GET('/api/history', { params: { query: query as { page: string } } })),
    placeholderData: keepPreviousData,
  });
  const facets = history.data?.facets as { status?: Record<string, number>; type?: Record<string, number>; trigger?: Record<string, number> } | undefined;
  const withCount = (values: readonly string[], counts?: Record<string, number>) => values.map((value) => ({ value, label: counts?.[value] !== undefined ? `${value} (${counts[value]})` : value }));
  const total = history.data?.total ?? history.data?.executions.length ?? 0;
  const reset = (set: (value: string | null) => void) => (value: string | null) => {
    set(value);
    setPage(1);
  };
  return (
    <Stack>
      <Title order={2}>History</Title>
      <Group grow preventGrowOverflow={false} wrap="wrap">
        <TextInput label="Search" placeholder="Job name, file, error…" value={search} onChange={(event) => { setSearch(event.currentTarget.value); setPage(1); }} />
        <Select label="Status" data={withCount(STATUSES, facets?.status)} value={status} onChange={reset(setStatus)} clearable placeholder="Any" />
        <Select label="Type" data={withCount(TYPES, facets?.type)} value={type} onChange={reset(setType)} clearable placeholder="Any" />
        <Select label="Trigger" data={withCount(TRIGGERS, facets?.trigger)} value={trigger} onChange={reset(setTrigger)} clearable placeholder="Any" />
      </Group>
      <QueryState isPending={history.isPending} error={history.error} isEmpty={history.data?.executions.length === 0} empty="No executions match.">
        <Table.ScrollContainer minWidth={760}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Job</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Started</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th>Trigger</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {history.data?.executions.map((execution) => (
                <Table.Tr key={execution.id} data-testid="history-row">
                  <Table.Td>
                    <Anchor component={Link} to={`/runs/${execution.id}`}>
                      {execution.jobName || '(manual)'}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{execution.type}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={execution.status} />
                  </Table.Td>
                  <Table.Td>{formatDate(execution.startedAt)}</Table.Td>
                  <Table.Td>{formatDuration(execution.duration)}</Table.Td>
                  <Table.Td>{formatBytes(execution.size)}</Table.Td>
                  <Table.Td>{[execution.triggerType, execution.triggerLabel].filter(Boolean).join(': ') || '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        <Group justify="space-between">
          <Text size="sm" c="dimmed">
            {total} executions; times in {history.data?.systemTimezone ?? 'the system timezone'} on the server, shown in your local time
          </Text>
          <Pagination total={Math.max(1, Math.ceil(total / PAGE_SIZE))} value={page} onChange={setPage} aria-label="History pages" getControlProps={(control) => ({ 'aria-label': `${control} page` })} />
        </Group>
      </QueryState>
    </Stack>
  );
}
