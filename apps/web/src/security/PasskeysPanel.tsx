import { Alert, Button, Group, Modal, Paper, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { withStepUp } from './StepUp';
import { passkeyErrorMessage, passkeysAvailable, registerPasskey } from '../api/passkeys';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';

const PASSKEYS_KEY = ['passkeys'];

/** A ceremony the browser ended gets plain words; anything else (the server's answer) is shown as it came. */
function CeremonyError({ error, title }: { error: unknown; title: string }) {
  const plain = passkeyErrorMessage(error);
  return plain ? (
    <Alert color="red" title={title} role="alert">
      {plain}
    </Alert>
  ) : (
    <ErrorAlert error={error} title={title} />
  );
}

function deviceTypeLabel(deviceType: string): string {
  if (deviceType === 'multiDevice') return 'Synced (multi-device)';
  if (deviceType === 'singleDevice') return 'This device only';
  return deviceType;
}

/** Passkeys of the signed-in user: add one with this browser's authenticator, rename, delete, and use as second step. */
export function PasskeysPanel() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: PASSKEYS_KEY, queryFn: () => unwrap(api.GET('/api/auth/passkeys')) });
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: PASSKEYS_KEY });
  const add = useMutation({
    // Adding or removing a factor while having one needs a fresh one (issue 45.4): asked for when the server says so.
    mutationFn: () => withStepUp(() => registerPasskey(name.trim() || undefined)),
    onSuccess: async () => {
      setName('');
      notifications.show({ color: 'green', message: 'Passkey added' });
      await invalidate();
    },
  });
  const rename = useMutation({
    mutationFn: (next: { id: string; name: string }) => unwrap(api.PATCH('/api/auth/passkeys/{id}', { params: { path: { id: next.id } }, body: { name: next.name } })),
    onSuccess: async () => {
      setRenaming(null);
      await invalidate();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => withStepUp(() => unwrap(api.DELETE('/api/auth/passkeys/{id}', { params: { path: { id } } }))),
    onSuccess: invalidate,
  });
  const secondStep = useMutation({
    mutationFn: (enabled: boolean) => unwrap(api.PUT('/api/auth/passkeys/two-factor', { body: { enabled } })),
    onSuccess: invalidate,
  });
  const submitAdd = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  const supported = passkeysAvailable();
  const passkeys = list.data?.passkeys ?? [];

  return (
    <Paper withBorder p="md" component="section" aria-labelledby="passkeys-title">
      <Stack>
        <Title order={3} size="h4" id="passkeys-title">
          Passkeys
        </Title>
        <Text size="sm">Sign in with your device&apos;s screen lock or a security key instead of a password, or use one as the second step after it.</Text>
        {!supported && (
          <Alert color="yellow" title="This browser cannot use passkeys">
            Open Holdfast over HTTPS (or on localhost) in a current browser to add or use a passkey.
          </Alert>
        )}
        <form onSubmit={submitAdd} noValidate>
          <Group align="flex-end" gap="xs">
            <TextInput
              label="Name for the new passkey"
              description="Optional, e.g. “Work laptop”"
              maxLength={100}
              value={name}
              onChange={(event) => setName(event.currentTarget.value)}
              data-field="passkey-name"
            />
            <Button type="submit" loading={add.isPending} disabled={!supported}>
              Add a passkey
            </Button>
          </Group>
        </form>
        {add.error && <CeremonyError error={add.error} title="No passkey added" />}
        {(rename.error ?? remove.error ?? secondStep.error) && <ErrorAlert error={rename.error ?? remove.error ?? secondStep.error} />}
        <QueryState isPending={list.isPending} error={list.error} isEmpty={passkeys.length === 0} empty="No passkeys yet.">
          <Table.ScrollContainer minWidth={620}>
            <Table striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th>Backed up</Table.Th>
                  <Table.Th>Added</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {passkeys.map((passkey) => {
                  const label = passkey.name ?? 'Unnamed passkey';
                  return (
                    <Table.Tr key={passkey.id} data-testid="passkey-row">
                      <Table.Td>{label}</Table.Td>
                      <Table.Td>{deviceTypeLabel(passkey.deviceType)}</Table.Td>
                      <Table.Td>
                        <ToneBadge color={passkey.backedUp ? 'green' : 'gray'}>{passkey.backedUp ? 'yes' : 'no'}</ToneBadge>
                      </Table.Td>
                      <Table.Td>{formatDate(passkey.createdAt)}</Table.Td>
                      <Table.Td>
                        <Group gap={4} wrap="nowrap">
                          <Button size="xs" variant="default" onClick={() => setRenaming({ id: passkey.id, name: passkey.name ?? '' })} aria-label={`Rename ${label}`}>
                            Rename
                          </Button>
                          <Button
                            size="xs"
                            variant="default"
                            color="red"
                            aria-label={`Delete ${label}`}
                            onClick={() => window.confirm(`Delete the passkey "${label}"? It can no longer sign you in.`) && remove.mutate(passkey.id)}
                          >
                            Delete
                          </Button>
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
        <Switch
          label="Ask for a passkey after the password"
          description={passkeys.length === 0 ? 'Add a passkey first.' : 'Signing in with the password then needs one of these passkeys too.'}
          checked={list.data?.passkeyTwoFactor ?? false}
          disabled={passkeys.length === 0 || secondStep.isPending}
          onChange={(event) => secondStep.mutate(event.currentTarget.checked)}
          data-field="passkey-two-factor"
        />
      </Stack>
      <Modal opened={renaming !== null} onClose={() => setRenaming(null)} title="Rename passkey" centered closeButtonProps={{ 'aria-label': 'Close' }}>
        {renaming && (
          <form
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              if (renaming.name.trim()) rename.mutate({ id: renaming.id, name: renaming.name.trim() });
            }}
          >
            <Stack>
              <TextInput label="Name" required maxLength={100} value={renaming.name} onChange={(event) => setRenaming({ ...renaming, name: event.currentTarget.value })} data-autofocus data-field="passkey-rename" />
              <Group justify="flex-end">
                <Button variant="default" onClick={() => setRenaming(null)}>
                  Cancel
                </Button>
                <Button type="submit" loading={rename.isPending} disabled={!renaming.name.trim()}>
                  Save name
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Modal>
    </Paper>
  );
}
