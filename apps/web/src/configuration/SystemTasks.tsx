import { Button, Group, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { formatDate, formatDuration } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { StatusBadge } from '../components/StatusBadge';

const loadTasks = () => unwrap(api.GET('/api/settings/system-tasks'));

/** What each system task does, in words (the API's names are constants such as REFRESH_STORAGE_STATS). */
const TASK_LABELS: Record<string, string> = {
  HEALTH_CHECK: 'Check sources and destinations',
  CLEAN_OLD_LOGS: 'Delete old logs',
  UPDATE_DB_VERSIONS: 'Record database versions',
  REFRESH_STORAGE_STATS: 'Measure storage used',
};

/** "REFRESH_STORAGE_STATS" reads "Measure storage used"; an unknown task is spelled out from its name. */
export function taskLabel(task: string): string {
  return TASK_LABELS[task] ?? task.toLowerCase().replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
}
/** The tasks this settings route manages, as the API names them. */
type TaskName = Awaited<ReturnType<typeof loadTasks>>[number]['task'];

/** System tasks: turn on or off, change the schedule, run now; and their latest runs. */
export function SystemTasks({ canWrite }: { canWrite: boolean }) {
  const queryClient = useQueryClient();
  const tasks = useQuery({ queryKey: ['system-tasks'], queryFn: loadTasks });
  const runs = useQuery({
    queryKey: ['system-tasks', 'runs'],
    queryFn: () => unwrap(api.GET('/api/settings/system-tasks/runs', { params: { query: { page: 1, pageSize: 10 } } })),
    // A run started here finishes on the server: look again while one is still running.
    refetchInterval: (query) => (query.state.data?.runs.some((run) => run.status === 'Running') ? 2_000 : false),
  });
  const [schedules, setSchedules] = useState<Record<string, string>>({});
  useEffect(() => {
    if (tasks.data) setSchedules(Object.fromEntries(tasks.data.map((task) => [task.task, task.schedule])));
  }, [tasks.data]);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['system-tasks'] });
  const change = useMutation({
    mutationFn: (task: { task: TaskName; enabled?: boolean; schedule?: string }) => unwrap(api.PUT('/api/settings/system-tasks', { body: { tasks: [task] } })),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: 'System task saved', closeButtonProps: { 'aria-label': 'Dismiss' } });
      await invalidate();
    },
  });
  const runNow = useMutation({
    mutationFn: (task: string) => unwrap(api.POST('/api/settings/system-tasks/{task}/run', { params: { path: { task } } })),
    onSuccess: invalidate,
  });
  const failure = change.error ?? runNow.error;
  return (
    <Stack>
      <Title order={3} size="h4">
        System tasks
      </Title>
      {failure && <ErrorAlert error={failure} title="The system task was not changed" />}
      <QueryState isPending={tasks.isPending} error={tasks.error}>
        <Table.ScrollContainer minWidth={860}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Task</Table.Th>
                <Table.Th>Schedule (cron)</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th>Last run</Table.Th>
                <Table.Th>Next run</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {tasks.data?.map((task) => (
                <Table.Tr key={task.task} data-testid="system-task-row" data-task={task.task}>
                  <Table.Td>
                    <Text size="sm">{taskLabel(task.task)}</Text>
                    <Text size="xs" c="dimmed">
                      {task.task}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <TextInput
                      aria-label={`Schedule of ${task.task}`}
                      size="xs"
                      w={150}
                      value={schedules[task.task] ?? task.schedule}
                      disabled={!canWrite}
                      onChange={(event) => setSchedules({ ...schedules, [task.task]: event.currentTarget.value })}
                    />
                  </Table.Td>
                  <Table.Td>
                    <Switch aria-label={`Enable ${task.task}`} checked={task.enabled} disabled={!canWrite} onChange={(event) => change.mutate({ task: task.task, enabled: event.currentTarget.checked })} />
                  </Table.Td>
                  <Table.Td>{formatDate(task.lastRunAt)}</Table.Td>
                  <Table.Td>{formatDate(task.nextRunAt)}</Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="xs"
                        variant="default"
                        aria-label={`Save the schedule of ${task.task}`}
                        disabled={!canWrite || (schedules[task.task] ?? task.schedule) === task.schedule}
                        onClick={() => change.mutate({ task: task.task, schedule: (schedules[task.task] ?? task.schedule).trim() })}
                      >
                        Save
                      </Button>
                      <Button size="xs" aria-label={`Run now: ${task.task}`} disabled={!canWrite} loading={runNow.isPending && runNow.variables === task.task} onClick={() => runNow.mutate(task.task)}>
                        Run now
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
      <Text size="sm" fw={500}>
        Latest runs
      </Text>
      <QueryState isPending={runs.isPending} error={runs.error} isEmpty={runs.data?.runs.length === 0} empty="No system task has run yet.">
        <Table.ScrollContainer minWidth={720}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Task</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Trigger</Table.Th>
                <Table.Th>Started</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Message</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.data?.runs.map((run) => (
                <Table.Tr key={run.id} data-testid="system-task-run">
                  <Table.Td>{run.task}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={run.status} />
                  </Table.Td>
                  <Table.Td>{run.trigger}</Table.Td>
                  <Table.Td>{formatDate(run.startedAt)}</Table.Td>
                  <Table.Td>{formatDuration(run.durationMs)}</Table.Td>
                  <Table.Td>{run.message ?? '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
