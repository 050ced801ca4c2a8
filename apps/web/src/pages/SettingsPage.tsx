import { Anchor, Button, Group, NumberInput, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';

/** System settings (concurrency, timezone, retention of logs) and the system tasks with their schedules. */
export default function SettingsPage() {
  const auth = useAuth();
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')) });
  const tasks = useQuery({ queryKey: ['system-tasks'], queryFn: () => unwrap(api.GET('/api/settings/system-tasks')) });
  const [form, setForm] = useState({ maxConcurrentJobs: 1, systemTimezone: '', auditRetentionDays: 90 });
  useEffect(() => {
    if (settings.data) setForm({ maxConcurrentJobs: settings.data.maxConcurrentJobs, systemTimezone: settings.data.systemTimezone, auditRetentionDays: settings.data['audit.retentionDays'] });
  }, [settings.data]);
  const save = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/settings', { body: { maxConcurrentJobs: form.maxConcurrentJobs, systemTimezone: form.systemTimezone, 'audit.retentionDays': form.auditRetentionDays } })),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: 'Settings saved' });
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  return (
    <Stack maw={820}>
      <Title order={2}>Settings</Title>
      {auth.can('settings:read') && (
        <Text size="sm">
          Sign-in through an identity provider: <Anchor component={Link} to="/settings/sso" underline="always">single sign-on providers (OIDC, SAML)</Anchor>.
        </Text>
      )}
      <QueryState isPending={settings.isPending} error={settings.error}>
        <Paper withBorder p="md">
          <form
            onSubmit={(event) => {
              event.preventDefault();
              save.mutate();
            }}
          >
            <Stack>
              <NumberInput label="Concurrent jobs" min={1} value={form.maxConcurrentJobs} onChange={(value) => setForm({ ...form, maxConcurrentJobs: Number(value) || 1 })} />
              <TextInput label="System timezone" description="IANA name, e.g. Europe/Berlin" value={form.systemTimezone} onChange={(event) => setForm({ ...form, systemTimezone: event.currentTarget.value })} />
              <NumberInput label="Keep audit entries (days)" min={1} value={form.auditRetentionDays} onChange={(value) => setForm({ ...form, auditRetentionDays: Number(value) || 1 })} />
              {save.error && <ErrorAlert error={save.error} title="Could not save" />}
              <Group>
                <Button type="submit" loading={save.isPending}>
                  Save settings
                </Button>
              </Group>
            </Stack>
          </form>
        </Paper>
      </QueryState>
      <Title order={3} size="h4">
        System tasks
      </Title>
      <QueryState isPending={tasks.isPending} error={tasks.error}>
        <Table.ScrollContainer minWidth={560}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Task</Table.Th>
                <Table.Th>Schedule</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th>Last run</Table.Th>
                <Table.Th>Next run</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {tasks.data?.map((task) => (
                <Table.Tr key={task.task}>
                  <Table.Td>{task.task}</Table.Td>
                  <Table.Td>
                    <code>{task.schedule}</code>
                  </Table.Td>
                  <Table.Td>{task.enabled ? 'yes' : 'no'}</Table.Td>
                  <Table.Td>{formatDate(task.lastRunAt)}</Table.Td>
                  <Table.Td>{formatDate(task.nextRunAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
