import { Anchor, Button, Group, Paper, PasswordInput, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { z } from 'zod';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';

const userSchema = z.object({
  name: z.string().trim().min(1, 'Enter a name'),
  email: z.email('Enter a valid email address'),
  password: z.string().min(12, 'Use at least 12 characters'),
  groupId: z.string().nullable(),
});

/** Users with their group (assigned here); the groups themselves are edited on /groups. */
export default function UsersPage() {
  const queryClient = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => unwrap(api.GET('/api/users')) });
  const groups = useQuery({ queryKey: ['groups'], queryFn: () => unwrap(api.GET('/api/groups')) });
  const [form, setForm] = useState({ name: '', email: '', password: '', groupId: null as string | null });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: (body: z.infer<typeof userSchema>) => unwrap(api.POST('/api/users', { body })),
    onSuccess: async () => {
      setForm({ name: '', email: '', password: '', groupId: null });
      await queryClient.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const assign = useMutation({
    mutationFn: ({ id, groupId }: { id: string; groupId: string | null }) => unwrap(api.PUT('/api/users/{id}', { params: { path: { id } }, body: { groupId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  });
  const groupChoices = (groups.data?.groups ?? []).map((group) => ({ value: group.id, label: group.name }));
  return (
    <Stack>
      <Title order={2}>Users</Title>
      <Text size="sm">
        What members of a group may do is set on the <Anchor component={Link} to="/groups" underline="always">groups and permissions</Anchor> page.
      </Text>
      {assign.error && <ErrorAlert error={assign.error} title="Could not change the group" />}
      <QueryState isPending={users.isPending} error={users.error}>
        <Table.ScrollContainer minWidth={520}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Group</Table.Th>
                <Table.Th>Role</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {users.data?.users.map((user) => (
                <Table.Tr key={user.id}>
                  <Table.Td>{user.name}</Table.Td>
                  <Table.Td>{user.email}</Table.Td>
                  <Table.Td>
                    <Select
                      aria-label={`Group of ${user.name}`}
                      size="xs"
                      data={groupChoices}
                      value={user.groupId}
                      clearable
                      placeholder="No group"
                      onChange={(groupId) => assign.mutate({ id: user.id, groupId })}
                      data-testid="user-group"
                    />
                  </Table.Td>
                  <Table.Td>{user.isSuperAdmin ? <ToneBadge color="blue">administrator</ToneBadge> : 'member'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
      <Paper withBorder p="md">
        <Title order={3} size="h4" mb="sm">
          Add a user
        </Title>
        <form
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            const parsed = userSchema.safeParse(form);
            if (!parsed.success) {
              setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message])));
              return;
            }
            setErrors({});
            create.mutate(parsed.data);
          }}
        >
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="Name" value={form.name} error={errors.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} />
            <TextInput label="Email" type="email" value={form.email} error={errors.email} onChange={(event) => setForm({ ...form, email: event.currentTarget.value })} />
            <PasswordInput label="Password" autoComplete="new-password" value={form.password} error={errors.password} onChange={(event) => setForm({ ...form, password: event.currentTarget.value })} />
            <Select label="Group" data={(groups.data?.groups ?? []).map((group) => ({ value: group.id, label: group.name }))} value={form.groupId} onChange={(groupId) => setForm({ ...form, groupId })} clearable placeholder="No group" />
          </SimpleGrid>
          {create.error && <ErrorAlert error={create.error} title="Could not add the user" />}
          <Group mt="sm">
            <Button type="submit" loading={create.isPending}>
              Add user
            </Button>
          </Group>
        </form>
      </Paper>
    </Stack>
  );
}
