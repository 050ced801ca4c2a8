import { Alert, Button, Code, CopyButton, Group, PasswordInput, Select, SimpleGrid, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, QueryState } from '../components/PageState';
import { EditorPanel } from '../configuration/EditorPanel';
import { PageHeader } from '../configuration/PageHeader';
import { DeleteButton, EditButton, RecordTable } from '../configuration/RecordTable';
import { useDeleteRecord, useSaveRecord } from '../configuration/useRecordMutations';
import { CREDENTIAL_FIELDS, CREDENTIAL_TYPES, credentialPayload, type CredentialType } from '../configuration/credential-fields';

type Profile = Awaited<ReturnType<typeof loadProfiles>>[number];

const QUERY_KEY = ['credentials'];

function loadProfiles() {
  return unwrap(api.GET('/api/credentials'));
}

/** How many adapter configurations and jobs use a profile (its own query: one small call per row). */
function UsageCell({ id }: { id: string }) {
  const usage = useQuery({ queryKey: ['credentials', id, 'usage'], queryFn: () => unwrap(api.GET('/api/credentials/{id}/usage', { params: { path: { id } } })) });
  if (usage.isPending) return <Text size="sm">…</Text>;
  if (usage.error) return <Text size="sm" fw={600}>unknown</Text>;
  const names = usage.data.adapters.map((adapter) => adapter.name).join(', ');
  return (
    <Text size="sm" title={names || undefined} data-testid="credential-usage">
      {usage.data.adapters.length} configurations, {usage.data.jobs.length} jobs
    </Text>
  );
}

/** Add or edit one profile: fields per type, secrets never filled in (a stored one says so and stays when empty). */
function CredentialForm({ profile, onDone }: { profile: Profile | null; onDone: () => void }) {
  const [type, setType] = useState<CredentialType>((profile?.type as CredentialType) ?? 'USERNAME_PASSWORD');
  const [name, setName] = useState(profile?.name ?? '');
  const [description, setDescription] = useState(profile?.description ?? '');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(profile?.data ?? {}).map(([key, value]) => [key, typeof value === 'string' ? value : ''])),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useSaveRecord(
    QUERY_KEY,
    (data: Record<string, string>) => {
      const body = { name: name.trim(), description: description.trim() || null, data };
      return profile
        ? unwrap(api.PUT('/api/credentials/{id}', { params: { path: { id: profile.id } }, body }))
        : unwrap(api.POST('/api/credentials', { body: { ...body, type } }));
    },
    onDone,
  );
  return (
    <EditorPanel
      title={profile ? `Edit ${profile.name}` : 'Add a credential profile'}
      onSubmit={() => {
        const { data, errors: found } = credentialPayload(type, values, profile?.secretStatus ?? null);
        if (!name.trim()) found.name = 'Enter a name';
        setErrors(found);
        if (Object.keys(found).length === 0) save.mutate(data);
      }}
      submitLabel="Save profile"
      saving={save.isPending}
      error={save.error}
      errorTitle="Could not save the profile"
      onCancel={onDone}
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={name} error={errors.name} onChange={(event) => setName(event.currentTarget.value)} data-field="credential-name" />
        <Select
          label="Type"
          data={CREDENTIAL_TYPES}
          value={type}
          disabled={Boolean(profile)}
          description={profile ? 'The type of a profile is fixed' : undefined}
          allowDeselect={false}
          onChange={(value) => value && setType(value as CredentialType)}
          data-field="credential-type"
        />
      </SimpleGrid>
      <TextInput label="Description" value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
      {CREDENTIAL_FIELDS[type].map((field) => {
        const stored = Boolean(profile?.secretStatus[field.name]);
        const common = {
          label: field.label,
          required: field.required && !stored,
          value: values[field.name] ?? '',
          error: errors[field.name],
          placeholder: field.secret && stored ? '•••••• stored (leave empty to keep)' : undefined,
          'data-field': `credential-${field.name}`,
          onChange: (event: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setValues({ ...values, [field.name]: event.currentTarget.value }),
        };
        if (field.multiline) return <Textarea key={field.name} autosize minRows={2} maxRows={8} {...common} />;
        if (field.secret) return <PasswordInput key={field.name} autoComplete="new-password" {...common} />;
        return <TextInput key={field.name} {...common} />;
      })}
    </EditorPanel>
  );
}

/** Generates a key pair on the server; only the public key comes back, to install on the remote host. */
function SshKeyForm({ onDone }: { onDone: (created: { name: string; publicKey: string }) => void }) {
  const [form, setForm] = useState({ name: '', username: '', algorithm: 'ed25519', passphrase: '' });
  const [error, setError] = useState('');
  const generate = useSaveRecord(
    QUERY_KEY,
    () =>
      unwrap(
        api.POST('/api/credentials/ssh-key', {
          body: { name: form.name.trim(), algorithm: form.algorithm as 'ed25519' | 'rsa' | 'ecdsa', ...(form.username.trim() ? { username: form.username.trim() } : {}), ...(form.passphrase ? { passphrase: form.passphrase } : {}) },
        }),
      ),
    (created) => onDone({ name: created.name, publicKey: created.publicKey }),
  );
  return (
    <EditorPanel
      title="Generate an SSH key"
      onSubmit={() => {
        if (!form.name.trim()) return setError('Enter a name');
        setError('');
        generate.mutate();
      }}
      submitLabel="Generate key"
      saving={generate.isPending}
      error={generate.error}
      errorTitle="Could not generate the key"
    >
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={form.name} error={error} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="ssh-name" />
        <TextInput label="Username" value={form.username} onChange={(event) => setForm({ ...form, username: event.currentTarget.value })} data-field="ssh-username" />
        <Select
          label="Algorithm"
          data={[
            { value: 'ed25519', label: 'Ed25519' },
            { value: 'rsa', label: 'RSA 4096' },
            { value: 'ecdsa', label: 'ECDSA P-256' },
          ]}
          value={form.algorithm}
          allowDeselect={false}
          onChange={(value) => value && setForm({ ...form, algorithm: value })}
        />
        <PasswordInput label="Passphrase (optional)" autoComplete="new-password" value={form.passphrase} onChange={(event) => setForm({ ...form, passphrase: event.currentTarget.value })} />
      </SimpleGrid>
    </EditorPanel>
  );
}

/** Credential profiles: the logins and keys adapter configurations refer to, with where each is used. */
export default function CredentialsPage() {
  const profiles = useQuery({ queryKey: QUERY_KEY, queryFn: loadProfiles });
  const [editing, setEditing] = useState<Profile | 'new' | 'ssh' | null>(null);
  const [generated, setGenerated] = useState<{ name: string; publicKey: string } | null>(null);
  const remove = useDeleteRecord(QUERY_KEY, (id) => unwrap(api.DELETE('/api/credentials/{id}', { params: { path: { id } } })));
  const typeLabel = (type: string) => CREDENTIAL_TYPES.find((entry) => entry.value === type)?.label ?? type;
  return (
    <Stack>
      <PageHeader title="Credential profiles">
        <Group gap="xs">
          <Button variant="default" onClick={() => setEditing('ssh')}>
            Generate SSH key
          </Button>
          <Button onClick={() => setEditing('new')}>Add profile</Button>
        </Group>
      </PageHeader>
      {generated && (
        <Alert color="green" title={`SSH key "${generated.name}" created`} withCloseButton closeButtonLabel="Dismiss" onClose={() => setGenerated(null)} data-testid="generated-key" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
          <Stack gap="xs">
            <span>Install this public key on the remote host (for example in ~/.ssh/authorized_keys). The private key stays on the server.</span>
            <Group gap="xs" wrap="nowrap" align="flex-start">
              <Code block style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap', flex: 1 }} data-testid="public-key">
                {generated.publicKey}
              </Code>
              <CopyButton value={generated.publicKey}>{({ copied, copy }) => <Button size="xs" onClick={copy}>{copied ? 'Copied' : 'Copy'}</Button>}</CopyButton>
            </Group>
          </Stack>
        </Alert>
      )}
      {editing === 'ssh' && (
        <SshKeyForm
          onDone={(created) => {
            setGenerated(created);
            setEditing(null);
          }}
        />
      )}
      {editing && editing !== 'ssh' && <CredentialForm key={editing === 'new' ? 'new' : editing.id} profile={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the profile" />}
      <QueryState isPending={profiles.isPending} error={profiles.error} isEmpty={profiles.data?.length === 0} empty="No credential profiles yet.">
        <RecordTable
          records={profiles.data}
          headers={['Name', 'Type', 'Used by']}
          minWidth={640}
          rowTestId="credential-row"
          cells={(profile) => (
            <>
              <Table.Td>{profile.name}</Table.Td>
              <Table.Td>{typeLabel(profile.type)}</Table.Td>
              <Table.Td>
                <UsageCell id={profile.id} />
              </Table.Td>
            </>
          )}
          actions={(profile) => (
            <>
              <EditButton name={profile.name} onClick={() => setEditing(profile)} />
              <DeleteButton name={profile.name} onDelete={() => remove.mutate(profile.id)} />
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
