import { Anchor, Group, Pagination, Select, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAdapters } from '../api/adapters';
import { api, unwrap } from '../api/client';
import { formatDate } from '../components/format';
import { QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

const PAGE_SIZE = 25;

/** Every notification sent (or that failed to send), newest first, with filters and paging. */
export default function NotificationLogPage() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<'Success' | 'Failed' | null>(null);
  const [channelId, setChannelId] = useState<string | null>(null);
  const channels = useAdapters('notification');
  const query = { page, pageSize: PAGE_SIZE, ...(status ? { status } : {}), ...(channelId ? { channelId } : {}) };
  const log = useQuery({
    queryKey: ['notification-log', query],
    queryFn: () => unwrap(api.GET('/api/notifications/log', { params: { query } })),
    placeholderData: keepPreviousData,
  });
  const pages = Math.max(1, Math.ceil((log.data?.total ?? 0) / PAGE_SIZE));
  return (
    <Stack>
      <Title order={2}>Notification log</Title>
      <Group>
        <Select
          label="Status"
          data={['Success', 'Failed']}
          value={status}
          clearable
          placeholder="Any"
          onChange={(value) => {
            setStatus(value as typeof status);
            setPage(1);
          }}
        />
        <Select
          label="Channel"
          data={(channels.data ?? []).map((channel) => ({ value: channel.id, label: channel.name }))}
          value={channelId}
          clearable
          placeholder="Any"
          onChange={(value) => {
            setChannelId(value);
            setPage(1);
          }}
        />
      </Group>
      <QueryState isPending={log.isPending} error={log.error} isEmpty={log.data?.entries.length === 0} empty="No notifications sent yet.">
        <Table.ScrollContainer minWidth={820}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Sent</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Channel</Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Title</Table.Th>
                <Table.Th>Execution</Table.Th>
                <Table.Th>Error</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {log.data?.entries.map((entry) => (
                <Table.Tr key={entry.id} data-testid="notification-row">
                  <Table.Td>{formatDate(entry.sentAt)}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={entry.status} />
                  </Table.Td>
                  <Table.Td>{entry.channelName}</Table.Td>
                  <Table.Td>
                    <code>{entry.eventType}</code>
                  </Table.Td>
                  <Table.Td>{entry.title}</Table.Td>
                  <Table.Td>
                    {entry.executionId ? (
                      <Anchor component={Link} to={`/runs/${entry.executionId}`} underline="always">
                        View run
                      </Anchor>
                    ) : (
                      '—'
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={entry.error ? 600 : undefined} style={{ wordBreak: 'break-word' }}>
                      {entry.error ?? '—'}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        <Group justify="space-between">
          <Text size="sm">{log.data?.total ?? 0} notifications</Text>
          <Pagination total={pages} value={page} onChange={setPage} aria-label="Notification log pages" getControlProps={(control) => ({ 'aria-label': `${control} page` })} />
        </Group>
      </QueryState>
    </Stack>
  );
}
