import { Button, Group, Paper, PasswordInput, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ProfileNav } from '../components/ProfileNav';

const MIN_PASSWORD_LENGTH = 8;

/** Change own password: the current one, then the new one twice. Other sessions end; this one stays. */
function ChangePasswordPanel() {
  const queryClient = useQueryClient();
  const auth = useAuth();
  const [form, setForm] = useState({ currentPassword: '', newPassword: '', repeat: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const change = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/users/me/password', { body: { currentPassword: form.currentPassword, newPassword: form.newPassword } })),
    onSuccess: async () => {
      setForm({ currentPassword: '', newPassword: '', repeat: '' });
      notifications.show({ color: 'green', message: 'Password changed. Your other sessions were signed out.' });
      await queryClient.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  if (!auth.emailLoginEnabled) return null;
  return (
    <Paper withBorder p="md">
      <Title order={3} size="h4" mb="xs">
        Change password
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        Your other sessions are signed out; this one stays signed in.
      </Text>
      <form
        aria-label="Change password"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          const found: Record<string, string> = {};
          if (!form.currentPassword) found.currentPassword = 'Enter your current password';
          if (form.newPassword.length < MIN_PASSWORD_LENGTH) found.newPassword = `Use at least ${MIN_PASSWORD_LENGTH} characters`;
          else if (form.newPassword === form.currentPassword) found.newPassword = 'Choose a password different from the current one';
          if (form.repeat !== form.newPassword) found.repeat = 'The two new passwords differ';
          setErrors(found);
          if (Object.keys(found).length === 0) change.mutate();
        }}
      >
        <Stack>
          <PasswordInput label="Current password" autoComplete="current-password" required value={form.currentPassword} error={errors.currentPassword} onChange={(event) => setForm({ ...form, currentPassword: event.currentTarget.value })} />
          <PasswordInput label="New password" autoComplete="new-password" required value={form.newPassword} error={errors.newPassword} onChange={(event) => setForm({ ...form, newPassword: event.currentTarget.value })} />
          <PasswordInput label="Repeat the new password" autoComplete="new-password" required value={form.repeat} error={errors.repeat} onChange={(event) => setForm({ ...form, repeat: event.currentTarget.value })} />
          {change.error && <ErrorAlert error={change.error} title="Could not change the password" />}
          <Group>
            <Button type="submit" loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

/** Own profile and preferences (timezone, formats, auto-redirect on job start), password and active sessions. */
export default function ProfilePage() {
  const auth = useAuth();
  const queryClient = useQueryClient();
  const sessions = useQuery({ queryKey: ['sessions'], queryFn: () => unwrap(api.GET('/api/auth/sessions')) });
  const user = auth.current?.user;
  const [form, setForm] = useState({ name: '', timezone: '', autoRedirectOnJobStart: true });
  useEffect(() => {
    if (user) setForm({ name: user.name, timezone: user.timezone, autoRedirectOnJobStart: user.autoRedirectOnJobStart });
  }, [user]);
  const save = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/users/me', { body: form })),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: 'Preferences saved' });
      await auth.refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/auth/sessions/{id}', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['sessions'] }),
  });
  return (
    <Stack maw={820}>
      <Title order={2}>Profile</Title>
      <ProfileNav />
      <Paper withBorder p="md">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            save.mutate();
          }}
        >
          <Stack>
            <TextInput label="Name" value={form.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} />
            <TextInput label="Timezone" description="IANA name; empty: the server's timezone" value={form.timezone} onChange={(event) => setForm({ ...form, timezone: event.currentTarget.value })} />
            <Switch label="Open the live run view when I start a job" checked={form.autoRedirectOnJobStart} onChange={(event) => setForm({ ...form, autoRedirectOnJobStart: event.currentTarget.checked })} />
            {save.error && <ErrorAlert error={save.error} title="Could not save" />}
            <Group>
              <Button type="submit" loading={save.isPending}>
                Save preferences
              </Button>
            </Group>
          </Stack>
        </form>
      </Paper>
      <ChangePasswordPanel />
      <Title order={3} size="h4">
        Sessions
      </Title>
      {revoke.error && <ErrorAlert error={revoke.error} />}
      <QueryState isPending={sessions.isPending} error={sessions.error}>
        <Table.ScrollContainer minWidth={520}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Signed in</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Browser</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {sessions.data?.sessions.map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{formatDate(entry.createdAt)}</Table.Td>
                  <Table.Td>{entry.ipAddress ?? '—'}</Table.Td>
                  <Table.Td>{entry.userAgent?.slice(0, 60) ?? '—'}</Table.Td>
                  <Table.Td>
                    {entry.isCurrent ? 'this session' : (
                      <Button size="xs" variant="default" onClick={() => revoke.mutate(entry.id)}>
                        Sign out
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
