import { Alert, Anchor, Button, Code, CopyButton, Group, Menu, Modal, Paper, PasswordInput, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { z } from 'zod';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';

const userSchema = z.object({
  name: z.string().trim().min(1, 'Enter a name'),
  email: z.email('Enter a valid email address'),
  password: z.string().min(12, 'Use at least 12 characters'),
  groupId: z.string().nullable(),
});

interface UserRow {
  id: string;
  name: string;
  email: string;
  isSuperAdmin: boolean;
  disabled: boolean;
  twoFactorEnabled: boolean | null;
  passkeyTwoFactor: boolean | null;
}

type Action = 'disable' | 'enable' | 'reset-password' | 'reset-second-factor' | 'grant-admin' | 'revoke-admin' | 'delete';

/** What each row action asks before it runs, and the button that confirms it. */
const CONFIRMATION: Record<Action, { title: (user: UserRow) => string; text: (user: UserRow) => string; confirm: string; color?: string }> = {
  disable: {
    title: (user) => `Disable ${user.name}?`,
    text: (user) => `${user.email} is signed out everywhere, cannot sign in, and their API keys stop working until you enable the account again.`,
    confirm: 'Disable user',
    color: 'red',
  },
  enable: { title: (user) => `Enable ${user.name}?`, text: () => 'They can sign in again and their API keys work again.', confirm: 'Enable user' },
  'reset-password': {
    title: (user) => `Reset the password of ${user.name}?`,
    text: () => 'Their sessions end. Type a new password, or leave the field empty to get a temporary one to hand over.',
    confirm: 'Reset password',
    color: 'orange',
  },
  'reset-second-factor': {
    title: (user) => `Reset the second factor of ${user.name}?`,
    text: () => 'Removes their authenticator app, backup codes and passkeys. Their next sign-in needs only the password; they can set up a second factor again.',
    confirm: 'Reset second factor',
    color: 'orange',
  },
  'grant-admin': { title: (user) => `Make ${user.name} an administrator?`, text: () => 'Administrators hold every permission.', confirm: 'Make administrator' },
  'revoke-admin': {
    title: (user) => `Remove the administrator rights of ${user.name}?`,
    text: () => 'They keep the permissions of their group only. The last enabled administrator keeps their rights.',
    confirm: 'Remove administrator rights',
    color: 'red',
  },
  delete: {
    title: (user) => `Delete ${user.name}?`,
    text: (user) => `${user.email} is removed with their API keys, sessions and second factors. This cannot be undone.`,
    confirm: 'Delete user',
    color: 'red',
  },
};

/** Confirms and runs one administrator action on a user; shows the server's refusal (e.g. the last administrator). */
function UserActionModal({ user, action, onClose }: { user: UserRow; action: Action; onClose(): void }) {
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [temporary, setTemporary] = useState<string | null>(null);
  const path = { params: { path: { id: user.id } } };
  const run = useMutation({
    mutationFn: async (): Promise<string | null> => {
      switch (action) {
        case 'disable':
        case 'enable':
          await unwrap(api.PUT('/api/users/{id}/enabled', { ...path, body: { enabled: action === 'enable' } }));
          return null;
        case 'reset-password': {
          const answer = await unwrap(api.POST('/api/users/{id}/reset-password', { ...path, body: password ? { password } : {} }));
          return answer.temporaryPassword ?? null;
        }
        case 'reset-second-factor':
          await unwrap(api.POST('/api/users/{id}/reset-second-factor', { ...path, body: {} }));
          return null;
        case 'grant-admin':
        case 'revoke-admin':
          await unwrap(api.PUT('/api/users/{id}', { ...path, body: { isSuperAdmin: action === 'grant-admin' } }));
          return null;
        case 'delete':
          await unwrap(api.DELETE('/api/users/{id}', path));
          return null;
      }
    },
    onSuccess: async (generated) => {
      await queryClient.invalidateQueries({ queryKey: ['users'] });
      if (generated) {
        setTemporary(generated);
        return;
      }
      notifications.show({ color: 'green', message: `${CONFIRMATION[action].confirm}: done for ${user.name}` });
      onClose();
    },
  });
  const wording = CONFIRMATION[action];
  const passwordTooShort = password.length > 0 && password.length < 8;
  return (
    <Modal opened onClose={onClose} title={wording.title(user)} closeButtonProps={{ 'aria-label': 'Close' }}>
      {temporary ? (
        <Stack>
          <Alert color="green" title="Temporary password" data-testid="temporary-password" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
            <Stack gap="xs">
              <span>Hand it to {user.name}; it is shown only this once. They can change it on their profile page.</span>
              <Group gap="xs" wrap="nowrap">
                <Code style={{ wordBreak: 'break-all' }}>{temporary}</Code>
                <CopyButton value={temporary}>{({ copied, copy }) => <Button size="xs" onClick={copy}>{copied ? 'Copied' : 'Copy'}</Button>}</CopyButton>
              </Group>
            </Stack>
          </Alert>
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            if (!passwordTooShort) run.mutate();
          }}
        >
          <Stack>
            <Text size="sm">{wording.text(user)}</Text>
            {action === 'reset-password' && (
              <PasswordInput
                label="New password"
                description="Leave empty to generate a temporary password"
                autoComplete="new-password"
                value={password}
                error={passwordTooShort ? 'Use at least 8 characters' : undefined}
                onChange={(event) => setPassword(event.currentTarget.value)}
              />
            )}
            {run.error && <ErrorAlert error={run.error} title={`Could not ${wording.confirm.toLowerCase()}`} />}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" color={wording.color} loading={run.isPending}>
                {wording.confirm}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

/** Users with their group (assigned here), status and administrator actions; the groups themselves are edited on /groups. */
export default function UsersPage() {
  const queryClient = useQueryClient();
  const auth = useAuth();
  const canWrite = auth.can('users:write');
  const users = useQuery({ queryKey: ['users'], queryFn: () => unwrap(api.GET('/api/users')) });
  const groups = useQuery({ queryKey: ['groups'], queryFn: () => unwrap(api.GET('/api/groups')), enabled: auth.can('groups:read') });
  const [form, setForm] = useState({ name: '', email: '', password: '', groupId: null as string | null });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [pending, setPending] = useState<{ user: UserRow; action: Action } | null>(null);
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
  const ask = (user: UserRow, action: Action) => setPending({ user, action });
  return (
    <Stack>
      <Title order={2}>Users</Title>
      <Text size="sm">
        What members of a group may do is set on the <Anchor component={Link} to="/groups" underline="always">groups and permissions</Anchor> page.
      </Text>
      {assign.error && <ErrorAlert error={assign.error} title="Could not change the group" />}
      <QueryState isPending={users.isPending} error={users.error}>
        <Table.ScrollContainer minWidth={720}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Group</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Status</Table.Th>
                {canWrite && <Table.Th>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {users.data?.users.map((user) => {
                const isMe = user.id === auth.current?.user.id;
                const hasSecondFactor = Boolean(user.twoFactorEnabled || user.passkeyTwoFactor);
                return (
                  <Table.Tr key={user.id} data-testid="user-row" data-email={user.email}>
                    <Table.Td>
                      {user.name}
                      {isMe ? ' (you)' : ''}
                    </Table.Td>
                    <Table.Td>{user.email}</Table.Td>
                    <Table.Td>
                      <Select
                        aria-label={`Group of ${user.name}`}
                        size="xs"
                        data={groupChoices}
                        value={user.groupId}
                        clearable
                        placeholder="No group"
                        disabled={!canWrite}
                        onChange={(groupId) => assign.mutate({ id: user.id, groupId })}
                        data-testid="user-group"
                      />
                    </Table.Td>
                    <Table.Td>{user.isSuperAdmin ? <ToneBadge color="blue">administrator</ToneBadge> : 'member'}</Table.Td>
                    <Table.Td data-testid="user-status">
                      <Group gap={4}>
                        {user.disabled ? <ToneBadge color="red">disabled</ToneBadge> : <ToneBadge color="green">active</ToneBadge>}
                        {hasSecondFactor && <ToneBadge color="gray">second factor</ToneBadge>}
                      </Group>
                    </Table.Td>
                    {canWrite && (
                      <Table.Td>
                        <Menu position="bottom-end" withinPortal>
                          <Menu.Target>
                            <Button size="xs" variant="default" aria-label={`Actions for ${user.name}`}>
                              Actions
                            </Button>
                          </Menu.Target>
                          <Menu.Dropdown>
                            {user.disabled ? (
                              <Menu.Item onClick={() => ask(user, 'enable')}>Enable</Menu.Item>
                            ) : (
                              <Menu.Item onClick={() => ask(user, 'disable')}>Disable</Menu.Item>
                            )}
                            {auth.emailLoginEnabled && <Menu.Item onClick={() => ask(user, 'reset-password')}>Reset password</Menu.Item>}
                            <Menu.Item onClick={() => ask(user, 'reset-second-factor')}>Reset second factor</Menu.Item>
                            {auth.current?.isSuperAdmin &&
                              (user.isSuperAdmin ? (
                                <Menu.Item onClick={() => ask(user, 'revoke-admin')}>Remove administrator rights</Menu.Item>
                              ) : (
                                <Menu.Item onClick={() => ask(user, 'grant-admin')}>Make administrator</Menu.Item>
                              ))}
                            <Menu.Divider />
                            <Menu.Item color="red" onClick={() => ask(user, 'delete')}>
                              Delete
                            </Menu.Item>
                          </Menu.Dropdown>
                        </Menu>
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
      {pending && <UserActionModal key={`${pending.user.id}-${pending.action}`} user={pending.user} action={pending.action} onClose={() => setPending(null)} />}
      {canWrite && (
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
              <Select label="Group" data={groupChoices} value={form.groupId} onChange={(groupId) => setForm({ ...form, groupId })} clearable placeholder="No group" />
            </SimpleGrid>
            {create.error && <ErrorAlert error={create.error} title="Could not add the user" />}
            <Group mt="sm">
              <Button type="submit" loading={create.isPending}>
                Add user
              </Button>
            </Group>
          </form>
        </Paper>
      )}
    </Stack>
  );
}
