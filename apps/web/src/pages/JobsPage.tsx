import { Anchor, Button, Group, Stack, Table, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { useAdapters } from '../api/adapters';
import { api, errorMessage, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { formatDate } from '../components/format';
import { QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

/** Starts a job and (per the user's preference) opens its live run view. */
export function useRunJob() {
  const navigate = useNavigate();
  const auth = useAuth();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ jobId, lock }: { jobId: string; lock: boolean }) => unwrap(api.POST('/api/jobs/{id}/run', { params: { path: { id: jobId } }, body: { lock } })),
    onSuccess: async (answer) => {
      await queryClient.invalidateQueries({ queryKey: ['history'] });
      if (auth.current?.user.autoRedirectOnJobStart !== false) navigate(`/runs/${answer.executionId}`);
      else notifications.show({ color: 'blue', message: answer.message });
    },
    onError: (error) => notifications.show({ color: 'red', title: 'Could not start the job', message: errorMessage(error) }),
  });
}

export default function JobsPage() {
  const auth = useAuth();
  const jobs = useQuery({ queryKey: ['jobs'], queryFn: () => unwrap(api.GET('/api/jobs')) });
  // Only what the caller may read is asked for: a refused side query would end the page in an error.
  const history = useQuery({ queryKey: ['history', 'latest-100'], queryFn: () => unwrap(api.GET('/api/history')), enabled: auth.can('history:read') });
  const sources = useAdapters('database', auth.can('sources:read'));
  const run = useRunJob();
  const last = new Map<string, { status: string; startedAt: string }>();
  for (const execution of history.data?.executions ?? []) if (execution.jobId && !last.has(execution.jobId)) last.set(execution.jobId, execution);
  const sourceName = (id: string) => sources.data?.find((source) => source.id === id)?.name ?? '—';
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Jobs</Title>
        {auth.can('jobs:write') && (
          <Button component={Link} to="/jobs/new">
            New job
          </Button>
        )}
      </Group>
      <QueryState isPending={jobs.isPending} error={jobs.error} isEmpty={jobs.data?.length === 0} empty="No jobs yet: add a source and a destination, then create a job.">
        <Table.ScrollContainer minWidth={0}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th visibleFrom="md">Source</Table.Th>
                <Table.Th visibleFrom="sm">Schedule</Table.Th>
                <Table.Th>Last run</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {jobs.data?.map((job) => {
                const lastRun = last.get(job.id);
                return (
                  <Table.Tr key={job.id}>
                    <Table.Td>
                      <Anchor component={Link} to={`/jobs/${job.id}`}>
                        {job.name}
                      </Anchor>
                    </Table.Td>
                    <Table.Td visibleFrom="md">{sourceName(job.sourceId)}</Table.Td>
                    <Table.Td visibleFrom="sm">
                      <code>{job.effectiveSchedule}</code> {job.enabled ? '' : '(paused)'}
                    </Table.Td>
                    <Table.Td>
                      {lastRun ? (
                        <Group gap="xs">
                          <StatusBadge status={lastRun.status} /> {formatDate(lastRun.startedAt)}
                        </Group>
                      ) : (
                        'never'
                      )}
                    </Table.Td>
                    <Table.Td>
                      {auth.canOn('jobs:execute', 'job', job.id) ? (
                        <Button size="xs" onClick={() => run.mutate({ jobId: job.id, lock: false })} loading={run.isPending && run.variables?.jobId === job.id} aria-label={`Run now: ${job.name}`}>
                          Run now
                        </Button>
                      ) : (
                        '—'
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
