import { Anchor, Button, Group, NumberInput, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { SystemTasks } from '../configuration/SystemTasks';

/** System settings (concurrency, timezone, retention of logs) and the system tasks with their schedules. */
export default function SettingsPage() {
  const auth = useAuth();
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/settings')) });
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
          Sign-in through an identity provider: <Anchor component={Link} to="/settings/sso" underline="always">single sign-on providers (OIDC, SAML)</Anchor>. Events outside jobs: <Anchor component={Link} to="/settings/notifications" underline="always">system notifications</Anchor>.
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
      <SystemTasks canWrite={auth.can('settings:write')} />
    </Stack>
  );
}
