import { Anchor, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ActivityBars } from '../dashboard/ActivityBars';
import { OutcomeCalendar } from '../dashboard/OutcomeCalendar';
import { runsInLast } from '../dashboard/outcomes';
import { useRefreshOnRunEnd } from '../dashboard/useRefreshOnRunEnd';
import { formatBytes, formatDate } from '../components/format';
import { EmptyState, QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';
import { PointInTimeOverviewCard } from '../pitr/PointInTimeOverviewCard';

function StatCard({ label, value }: { label: string; value: string | number }) {
  return (
    <Card withBorder padding="md">
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl" data-testid={`stat-${label}`}>
        {value}
      </Text>
    </Card>
  );
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export default function DashboardPage() {
  const auth = useAuth();
  const stats = useQuery({ queryKey: ['dashboard', 'stats'], queryFn: () => unwrap(api.GET('/api/dashboard/stats')) });
  const to = new Date();
  const from = new Date(to.getTime() - 364 * 86_400_000);
  const calendar = useQuery({
    queryKey: ['dashboard', 'calendar'],
    queryFn: () => unwrap(api.GET('/api/dashboard/calendar', { params: { query: { from: isoDay(from), to: isoDay(to) } } })),
  });
  // Latest runs and failing jobs need their own permissions; without them those cards are left out, not refused.
  const canSeeRuns = auth.can('history:read');
  const canSeeJobs = auth.can('jobs:read');
  const latest = useQuery({ queryKey: ['history', 'latest'], queryFn: () => unwrap(api.GET('/api/history', { params: { query: { page: '1', pageSize: '10' } } })), enabled: canSeeRuns });
  const jobs = useQuery({ queryKey: ['jobs'], queryFn: () => unwrap(api.GET('/api/jobs')), enabled: canSeeJobs && canSeeRuns });
  useRefreshOnRunEnd((latest.data?.executions ?? []).filter((execution) => execution.status === 'Running' || execution.status === 'Pending').map((execution) => execution.id));

  const days = calendar.data?.data.days ?? [];
  const hasRuns30d = runsInLast(days, 30) > 0;
  // The newest run of each job decides whether it is "failing".
  const lastByJob = new Map<string, { status: string; jobName: string; id: string; startedAt: string }>();
  for (const execution of latest.data?.executions ?? []) {
    if (execution.jobId && !lastByJob.has(execution.jobId)) lastByJob.set(execution.jobId, execution);
  }
  const failing = (jobs.data ?? []).filter((job) => lastByJob.get(job.id)?.status === 'Failed');
  const s = stats.data?.data;

  return (
    <Stack>
      <Title order={2}>Dashboard</Title>
      <QueryState isPending={stats.isPending} error={stats.error}>
        {s && (
          <SimpleGrid cols={{ base: 2, md: 4 }}>
            <StatCard label="Jobs" value={s.totalJobs} />
            <StatCard label="Active schedules" value={s.activeSchedules} />
            <StatCard label="Backups stored" value={s.totalSnapshots} />
            <StatCard label="Storage used" value={formatBytes(s.totalStorageBytes)} />
            <StatCard label="Success rate (30 days)" value={hasRuns30d || calendar.isPending ? `${Math.round(s.successRate30d * 10) / 10}%` : 'No runs yet'} />
            <StatCard label="Succeeded (24 h)" value={s.success24h} />
            <StatCard label="Failed (24 h)" value={s.failed24h} />
            <StatCard label="Storage measured" value={formatDate(s.storageUpdatedAt)} />
          </SimpleGrid>
        )}
      </QueryState>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder>
          <Title order={3} size="h4" mb="sm">
            Last 14 days
          </Title>
          <QueryState isPending={calendar.isPending} error={calendar.error}>
            <ActivityBars days={days.slice(-14)} />
          </QueryState>
        </Card>
        <Card withBorder>
          <Title order={3} size="h4" mb="sm">
            Backup calendar
          </Title>
          <QueryState isPending={calendar.isPending} error={calendar.error}>
            <OutcomeCalendar days={days} from={from} to={to} />
          </QueryState>
        </Card>
      </SimpleGrid>
      {canSeeRuns && <PointInTimeOverviewCard />}
      {canSeeRuns && (
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder>
          <Title order={3} size="h4" mb="sm">
            Latest runs
          </Title>
          <QueryState isPending={latest.isPending} error={latest.error} isEmpty={latest.data?.executions.length === 0} empty="No runs yet.">
            <Table.ScrollContainer minWidth={400}>
              <Table>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Job</Table.Th>
                    <Table.Th>Status</Table.Th>
                    <Table.Th>Started</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {latest.data?.executions.map((execution) => (
                    <Table.Tr key={execution.id}>
                      <Table.Td>
                        <Anchor component={Link} to={`/runs/${execution.id}`}>
                          {execution.jobName || execution.type}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>
                        <StatusBadge status={execution.status} />
                      </Table.Td>
                      <Table.Td>{formatDate(execution.startedAt)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          </QueryState>
        </Card>
        {canSeeJobs && (
        <Card withBorder>
          <Title order={3} size="h4" mb="sm">
            Jobs whose last run failed
          </Title>
          <QueryState isPending={jobs.isPending || latest.isPending} error={jobs.error ?? latest.error}>
            {failing.length === 0 ? (
              <EmptyState>No failing jobs.</EmptyState>
            ) : (
              <Stack gap="xs">
                {failing.map((job) => (
                  <Group key={job.id} justify="space-between">
                    <Anchor component={Link} to={`/jobs/${job.id}`}>
                      {job.name}
                    </Anchor>
                    <Anchor component={Link} to={`/runs/${lastByJob.get(job.id)!.id}`} size="sm">
                      Last run
                    </Anchor>
                  </Group>
                ))}
              </Stack>
            )}
          </QueryState>
        </Card>
        )}
      </SimpleGrid>
      )}
    </Stack>
  );
}
