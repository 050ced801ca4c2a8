import { Alert, Button, Code, CopyButton, Group, MultiSelect, Paper, Select, SimpleGrid, Stack, Switch, Table, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { z } from 'zod';
import { api, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { useAuth } from '../auth/AuthProvider';
import { ToneBadge } from '../components/StatusBadge';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';

const keySchema = z.object({
  name: z.string().trim().min(1, 'Enter a name'),
  permissions: z.array(z.string()).min(1, 'Choose at least one permission'),
  expiresOn: z.string(),
  allowBackupDeletion: z.boolean(),
});

/** The key stops working at the end of the chosen day in the browser's time zone; null without a date. */
function expiryOf(expiresOn: string): Date | null {
  return expiresOn ? new Date(`${expiresOn}T23:59:59.999`) : null;
}

function localToday(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
}

/** API keys: create (the raw key is shown once, with a copy button), enable/disable, rotate, delete. */
export default function ApiKeysPage() {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: () => unwrap(api.GET('/api/api-keys')) });
  const permissions = useQuery({ queryKey: ['permissions'], queryFn: () => unwrap(api.GET('/api/permissions')) });
  const auth = useAuth();
  const [form, setForm] = useState({ name: '', permissions: [] as string[], expiresOn: '', allowBackupDeletion: false });
  const [preset, setPreset] = useState<string | null>(null);
  // A key never holds more than its creator: a preset gives what the caller holds of it.
  const mayGrant = (permission: string) => auth.current?.isSuperAdmin === true || (auth.current?.permissions ?? []).includes(permission);
  const presets = permissions.data?.presets ?? [];
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [issued, setIssued] = useState<{ name: string; key: string } | null>(null);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['api-keys'] });
  const create = useMutation({
    // A key that may delete backups needs a fresh second factor to create (issue 45.4).
    mutationFn: ({ expiresOn, ...body }: z.infer<typeof keySchema>) =>
      withStepUp(() => unwrap(api.POST('/api/api-keys', { body: { ...body, expiresAt: expiryOf(expiresOn)?.toISOString() ?? null } }))),
    onSuccess: async (answer) => {
      setIssued({ name: answer.apiKey.name, key: answer.key });
      setForm({ name: '', permissions: [], expiresOn: '', allowBackupDeletion: false });
      setPreset(null);
      await invalidate();
    },
  });
  const rotate = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/api-keys/{id}/rotate', { params: { path: { id } } })),
    onSuccess: async (answer) => {
      setIssued({ name: answer.apiKey.name, key: answer.key });
      await invalidate();
    },
  });
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => unwrap(api.PATCH('/api/api-keys/{id}', { params: { path: { id } }, body: { enabled } })),
    onSuccess: invalidate,
  });
  const remove = useMutation({ mutationFn: (id: string) => unwrap(api.DELETE('/api/api-keys/{id}', { params: { path: { id } } })), onSuccess: invalidate });
  const failure = create.error ?? rotate.error ?? toggle.error ?? remove.error;
  return (
    <Stack>
      <Title order={2}>API keys</Title>
      {issued && (
        <Alert color="green" title={`Key "${issued.name}" created`} withCloseButton onClose={() => setIssued(null)} data-testid="issued-key" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
          <Stack gap="xs">
            <span>Copy it now: it is shown only once and cannot be read again.</span>
            <Group gap="xs" wrap="nowrap">
              <Code style={{ wordBreak: 'break-all' }} data-testid="raw-key">
                {issued.key}
              </Code>
              <CopyButton value={issued.key}>{({ copied, copy }) => <Button size="xs" onClick={copy}>{copied ? 'Copied' : 'Copy'}</Button>}</CopyButton>
            </Group>
          </Stack>
        </Alert>
      )}
      {failure && <ErrorAlert error={failure} />}
      <Paper withBorder p="md">
        <form
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            const parsed = keySchema.safeParse(form);
            if (!parsed.success) {
              setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message])));
              return;
            }
            const expiry = expiryOf(parsed.data.expiresOn);
            if (expiry && expiry.getTime() <= Date.now()) {
              setErrors({ expiresOn: 'Choose today or a later day' });
              return;
            }
            setErrors({});
            create.mutate(parsed.data);
          }}
        >
          <Stack>
            <TextInput label="Key name" required value={form.name} error={errors.name} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="key-name" />
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <Select
                label="Permission preset"
                description={presets.find((entry) => entry.id === preset)?.description ?? 'Fills the permissions below; adjust them as needed'}
                placeholder="Choose a preset"
                data={presets.map((entry) => ({ value: entry.id, label: entry.name }))}
                value={preset}
                clearable
                onChange={(id) => {
                  setPreset(id);
                  const chosen = presets.find((entry) => entry.id === id);
                  if (chosen) setForm({ ...form, permissions: chosen.permissions.filter(mayGrant) });
                }}
                data-field="key-preset"
              />
              <TextInput
                label="Expiry date"
                description="Optional: the key stops working at the end of this day (your time zone)"
                type="date"
                min={localToday()}
                value={form.expiresOn}
                error={errors.expiresOn}
                onChange={(event) => setForm({ ...form, expiresOn: event.currentTarget.value })}
                data-field="key-expiry"
              />
            </SimpleGrid>
            <MultiSelect
              label="Permissions"
              required
              searchable
              data={(permissions.data?.permissions ?? []).map((permission) => ({ value: permission.name, label: permission.name }))}
              value={form.permissions}
              error={errors.permissions}
              onChange={(value) => {
                setForm({ ...form, permissions: value });
                const matching = presets.find((entry) => entry.permissions.filter(mayGrant).sort().join() === [...value].sort().join());
                setPreset(matching?.id ?? null);
              }}
              data-field="key-permissions"
            />
            <Switch
              label="May delete backups"
              description="Also deleting destinations and encryption profiles, unlocking backups and changing retention. Off by default: a key without it gets 403 for these."
              checked={form.allowBackupDeletion}
              onChange={(event) => setForm({ ...form, allowBackupDeletion: event.currentTarget.checked })}
              data-field="key-allow-backup-deletion"
            />
            <Group>
              <Button type="submit" loading={create.isPending}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      </Paper>
      <QueryState isPending={keys.isPending} error={keys.error} isEmpty={keys.data?.apiKeys.length === 0} empty="No API keys yet.">
        <Table.ScrollContainer minWidth={720}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Prefix</Table.Th>
                <Table.Th>Permissions</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data?.apiKeys.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>
                    {key.name} {key.allowBackupDeletion && <ToneBadge color="red">may delete backups</ToneBadge>}
                  </Table.Td>
                  <Table.Td>
                    <Code>{key.prefix}…</Code>
                  </Table.Td>
                  <Table.Td>{key.permissions.join(', ')}</Table.Td>
                  <Table.Td data-testid="key-expiry">
                    {key.expiresAt ? (
                      <Group gap={4} wrap="nowrap">
                        <span>{formatDate(key.expiresAt)}</span>
                        {Date.parse(key.expiresAt) <= Date.now() && <ToneBadge color="red">expired</ToneBadge>}
                      </Group>
                    ) : (
                      'never'
                    )}
                  </Table.Td>
                  <Table.Td>{formatDate(key.lastUsedAt)}</Table.Td>
                  <Table.Td>
                    <Switch aria-label={`Enable ${key.name}`} checked={key.enabled} onChange={(event) => toggle.mutate({ id: key.id, enabled: event.currentTarget.checked })} />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button size="xs" variant="default" onClick={() => window.confirm(`Rotate ${key.name}? The old key stops working.`) && rotate.mutate(key.id)}>
                        Rotate
                      </Button>
                      <Button size="xs" color="red" variant="outline" onClick={() => window.confirm(`Delete ${key.name}?`) && remove.mutate(key.id)}>
                        Delete
                      </Button>
                    </Group>
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
