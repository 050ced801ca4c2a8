import { Anchor, Card, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { formatBytes } from '../components/format';
import { QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { POINT_IN_TIME_REFRESH_MS } from './point-in-time-api';
import { describeAge, describeWindow } from './restore-target';
import { browserTimeZone } from './zoned-time';

/**
 * Past this many seconds the dashboard marks a recovery point amber: the docs' bound for the default flush interval
 * (10 s) plus 10 s. The job page knows each source's own interval; the overview does not.
 */
const WARN_AFTER_SECONDS = 20;

/**
 * "Point-in-time recovery" on the dashboard (issue 43): every point-in-time job's recovery point, window and slot
 * lag, from `GET /api/point-in-time` (history:read; a scoped identity sees its granted jobs). Renders nothing when no
 * job archives a change log, so installations without PITR see no empty card.
 */
export function PointInTimeOverviewCard() {
  const archives = useQuery({ queryKey: ['point-in-time'], queryFn: () => unwrap(api.GET('/api/point-in-time')), refetchInterval: POINT_IN_TIME_REFRESH_MS });
  const entries = archives.data?.data ?? [];
  if (!archives.isPending && !archives.error && entries.length === 0) return null;
  const timeZone = browserTimeZone();
  return (
    <Card withBorder data-testid="pitr-overview">
      <Title order={3} size="h4" mb="sm">
        Point-in-time recovery
      </Title>
      <QueryState isPending={archives.isPending} error={archives.error}>
        <Table.ScrollContainer minWidth={500}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Job</Table.Th>
                <Table.Th>Recovery point</Table.Th>
                <Table.Th>Recoverable window</Table.Th>
                <Table.Th>Slot lag</Table.Th>
                <Table.Th>Archive</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {entries.map((entry) => (
                <Table.Tr key={entry.jobId} data-testid={`pitr-overview-${entry.jobId}`}>
                  <Table.Td>
                    <Anchor component={Link} to={`/jobs/${entry.jobId}`}>
                      {entry.jobName}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    {entry.recoveryPointSeconds === null ? (
                      <ToneBadge color="yellow">no window</ToneBadge>
                    ) : (
                      <ToneBadge color={entry.recoveryPointSeconds > WARN_AFTER_SECONDS ? 'yellow' : 'green'}>{describeAge(entry.recoveryPointSeconds)}</ToneBadge>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{entry.windowStart && entry.windowEnd ? describeWindow({ start: entry.windowStart, end: entry.windowEnd }, timeZone) : 'none yet'}</Text>
                  </Table.Td>
                  <Table.Td>{entry.slotLagBytes === null ? '–' : formatBytes(entry.slotLagBytes)}</Table.Td>
                  <Table.Td>
                    {entry.segments} pieces, {formatBytes(entry.storedBytes)}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Card>
  );
}
