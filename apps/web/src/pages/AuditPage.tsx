import { Badge, Button, Group, Pagination, Paper, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { formatDate } from '../components/format';
import { QueryState } from '../components/PageState';

const PAGE_SIZE = 25;

/** Actions the server writes (identity, catalog and engine), for the action filter. */
const ACTIONS = [
  'LOGIN',
  'LOGOUT',
  'login.failed',
  'CREATE',
  'UPDATE',
  'DELETE',
  'execute',
  'REVEAL',
  'EXPORT',
  'IMPORT',
  'ROTATE_KEY',
  'RECOVERY_KIT',
  'user.password-change',
  'user.password-reset',
  'user.second-factor-reset',
  'user.disable',
  'user.enable',
  'api-key.create',
  'api-key.rotate',
  'api-key.toggle',
  'api-key.update-permissions',
  'api-key.delete',
  'two-factor.enroll',
  'two-factor.enable',
  'two-factor.disable',
  'two-factor.backup-codes',
  'passkey.create',
  'passkey.rename',
  'passkey.delete',
];

interface Filters {
  actor: string;
  action: string | null;
  fromDate: string;
  toDate: string;
}

const EMPTY: Filters = { actor: '', action: null, fromDate: '', toDate: '' };

/** The API's filter parameters: the dates of the form are whole days in the browser's time zone. */
function queryOf(filters: Filters) {
  const query: { actor?: string; action?: string; from?: string; to?: string } = {};
  if (filters.actor.trim()) query.actor = filters.actor.trim();
  if (filters.action) query.action = filters.action;
  if (filters.fromDate) query.from = new Date(`${filters.fromDate}T00:00:00`).toISOString();
  if (filters.toDate) query.to = new Date(`${filters.toDate}T23:59:59.999`).toISOString();
  return query;
}

function actorLabel(type: string): string {
  if (type === 'api-key') return 'API key';
  if (type === 'anonymous') return 'not signed in';
  return 'user';
}

/** The audit log: who did what to which resource, filtered by who, action and date range, with a CSV export. */
export default function AuditPage() {
  const [page, setPage] = useState(1);
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const filterQuery = queryOf(applied);
  const audit = useQuery({
    queryKey: ['audit', page, filterQuery],
    queryFn: () => unwrap(api.GET('/api/audit', { params: { query: { page, pageSize: PAGE_SIZE, ...filterQuery } } })),
    placeholderData: keepPreviousData,
  });
  const rangeError = draft.fromDate && draft.toDate && draft.fromDate > draft.toDate ? 'The end date is before the start date' : undefined;
  const exportHref = `/api/audit/export${Object.keys(filterQuery).length ? `?${new URLSearchParams(filterQuery).toString()}` : ''}`;
  const isFiltered = Object.keys(filterQuery).length > 0;
  return (
    <Stack>
      <Title order={2}>Audit log</Title>
      <Paper withBorder p="md">
        <form
          aria-label="Audit log filters"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            if (rangeError) return;
            setPage(1);
            setApplied(draft);
          }}
        >
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
            <TextInput
              label="Who"
              description="Part of a user name, API key name or the email tried"
              value={draft.actor}
              onChange={(event) => setDraft({ ...draft, actor: event.currentTarget.value })}
              data-field="audit-actor"
            />
            <Select
              label="Action"
              description="Any action when empty"
              data={ACTIONS}
              searchable
              clearable
              value={draft.action}
              onChange={(action) => setDraft({ ...draft, action })}
              data-field="audit-action"
            />
            <TextInput label="From" description="First day (your time zone)" type="date" value={draft.fromDate} onChange={(event) => setDraft({ ...draft, fromDate: event.currentTarget.value })} data-field="audit-from" />
            <TextInput label="To" description="Last day (your time zone)" type="date" value={draft.toDate} error={rangeError} onChange={(event) => setDraft({ ...draft, toDate: event.currentTarget.value })} data-field="audit-to" />
          </SimpleGrid>
          <Group mt="sm">
            <Button type="submit">Apply filters</Button>
            <Button
              variant="default"
              disabled={!isFiltered && JSON.stringify(draft) === JSON.stringify(EMPTY)}
              onClick={() => {
                setDraft(EMPTY);
                setApplied(EMPTY);
                setPage(1);
              }}
            >
              Clear filters
            </Button>
            <Button component="a" href={exportHref} download variant="light" data-testid="audit-export">
              Download CSV{isFiltered ? ' (filtered)' : ''}
            </Button>
          </Group>
        </form>
      </Paper>
      <QueryState isPending={audit.isPending} error={audit.error} isEmpty={audit.data?.entries.length === 0} empty={isFiltered ? 'No audit entries match these filters.' : 'No audit entries yet.'}>
        <Text size="sm" c="dimmed" data-testid="audit-total">
          {audit.data?.total ?? 0} {audit.data?.total === 1 ? 'entry' : 'entries'}
        </Text>
        <Table.ScrollContainer minWidth={900}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>Action</Table.Th>
                <Table.Th>Resource</Table.Th>
                <Table.Th>Details</Table.Th>
                <Table.Th>Address</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {audit.data?.entries.map((entry) => (
                <Table.Tr key={entry.id} data-testid="audit-row">
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDate(entry.createdAt)}</Table.Td>
                  <Table.Td data-testid="audit-actor">
                    <Text size="sm">{entry.actorName ?? '—'}</Text>
                    <Text size="xs" c="dimmed">
                      {actorLabel(entry.actorType)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {entry.action === 'login.failed' ? (
                      <Badge color="red" variant="light" style={{ textTransform: 'none' }}>
                        {entry.action}
                      </Badge>
                    ) : (
                      entry.action
                    )}
                  </Table.Td>
                  <Table.Td data-testid="audit-resource">
                    <Text size="sm">{entry.resourceName ?? (entry.resourceId ? entry.resourceId.slice(0, 8) : '—')}</Text>
                    <Text size="xs" c="dimmed">
                      {entry.resource}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" lineClamp={2} ff="monospace" style={{ wordBreak: 'break-all' }}>
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
