import { BarChart, Heatmap } from '@mantine/charts';
import '@mantine/charts/styles.css';
import { Anchor, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { formatBytes, formatDate } from '../components/format';
import { EmptyState, QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

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
  const stats = useQuery({ queryKey: ['dashboard', 'stats'], queryFn: () => unwrap(api.GET('/api/dashboard/stats')) });
  const to = new Date();
  const from = new Date(to.getTime() - 364 * 86_400_000);
  const calendar = useQuery({
    queryKey: ['dashboard', 'calendar'],
    queryFn: () => unwrap(api.GET('/api/dashboard/calendar', { params: { query: { from: isoDay(from), to: isoDay(to) } } })),
  });
  const latest = useQuery({ queryKey: ['history', 'latest'], queryFn: () => unwrap(api.GET('/api/history', { params: { query: { page: '1', pageSize: '10' } } })) });
  const jobs = useQuery({ queryKey: ['jobs'], queryFn: () => unwrap(api.GET('/api/jobs')) });

  const days = calendar.data?.data.days ?? [];
  const activity = days.slice(-14).map((day) => ({ date: day.date.slice(5), Success: day.success, Partial: day.partial, Failed: day.failed }));
  // Days without runs stay blank (no entry) instead of the lightest colour.
  const heat = Object.fromEntries(days.map((day) => [day.date, day.success + day.partial + day.failed]).filter(([, count]) => Number(count) > 0));
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
            <StatCard label="Success rate (30 days)" value={`${Math.round(s.successRate30d * 10) / 10}%`} />
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
            <div role="img" aria-label="Backups per day over the last 14 days">
            <BarChart
              h={220}
              data={activity}
              dataKey="date"
              type="stacked"
              series={[
                { name: 'Success', color: 'green.7' },
                { name: 'Partial', color: 'yellow.6' },
                { name: 'Failed', color: 'red.7' },
              ]}
            />
            </div>
          </QueryState>
        </Card>
        <Card withBorder>
          <Title order={3} size="h4" mb="sm">
            Backup calendar
          </Title>
          <QueryState isPending={calendar.isPending} error={calendar.error}>
            <div style={{ overflowX: 'auto' }} role="img" aria-label="Runs per day over the last year" tabIndex={0}>
              <Heatmap data={heat} startDate={from} endDate={to} withMonthLabels withTooltip getTooltipLabel={({ date, value }) => `${date}: ${value ?? 0} runs`} />
            </div>
          </QueryState>
        </Card>
      </SimpleGrid>
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
      </SimpleGrid>
    </Stack>
  );
}
