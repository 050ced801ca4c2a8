import { Button, Group, Paper, Stack, Switch, Table, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ProfileNav } from '../components/ProfileNav';

/** Own profile and preferences (timezone, formats, auto-redirect on job start) and active sessions. */
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
