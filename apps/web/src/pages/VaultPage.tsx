import { Alert, Button, Code, PasswordInput, SimpleGrid, Stack, Table, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { formatDate } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { EditorPanel } from '../configuration/EditorPanel';
import { DeleteButton, RecordTable } from '../configuration/RecordTable';
import { saveBlob } from '../configuration/save-blob';
import { useDeleteRecord, useInvalidate } from '../configuration/useRecordMutations';

const QUERY_KEY = ['vault'];

/** Encryption profiles: keys that encrypt backups, each with a recovery kit to decrypt without Holdfast. */
export default function VaultPage() {
  const profiles = useQuery({ queryKey: QUERY_KEY, queryFn: () => unwrap(api.GET('/api/vault')) });
  const [form, setForm] = useState({ name: '', description: '', key: '', publicKey: '' });
  const [nameError, setNameError] = useState('');
  const invalidate = useInvalidate(QUERY_KEY);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/vault', {
          body: {
            name: form.name.trim(),
            description: form.description.trim() || null,
            ...(form.key.trim() ? { key: form.key.trim() } : {}),
            ...(form.publicKey.trim() ? { publicKey: form.publicKey.trim() } : {}),
          },
        }),
      ),
    onSuccess: async () => {
      setForm({ name: '', description: '', key: '', publicKey: '' });
      await invalidate();
    },
  });
  const remove = useDeleteRecord(QUERY_KEY, (id) => withStepUp(() => unwrap(api.DELETE('/api/vault/{id}', { params: { path: { id } } }))));
  const kit = useMutation({
    mutationFn: async (profile: { id: string; name: string }) => {
      const blob = await unwrap(api.GET('/api/vault/{id}/recovery-kit', { params: { path: { id: profile.id } }, parseAs: 'blob' }));
      saveBlob(blob as Blob, `holdfast-recovery-kit-${profile.name.replace(/[^\w.-]+/g, '-')}.tar`);
    },
  });
  return (
    <Stack>
      <Title order={2}>Encryption profiles</Title>
      <Alert color="yellow" title="Keep a recovery kit" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
        Backups encrypted with a profile can only be restored with its key. Download each profile&apos;s recovery kit and keep it somewhere safe, away from the backups.
      </Alert>
      <EditorPanel
        title="Add a profile"
        onSubmit={() => {
          if (!form.name.trim()) return setNameError('Enter a name');
          setNameError('');
          create.mutate();
        }}
        submitLabel="Add profile"
        saving={create.isPending}
        error={create.error}
        errorTitle="Could not add the profile"
      >
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Name" required value={form.name} error={nameError} onChange={(event) => setForm({ ...form, name: event.currentTarget.value })} data-field="vault-name" />
          <TextInput label="Description" value={form.description} onChange={(event) => setForm({ ...form, description: event.currentTarget.value })} />
        </SimpleGrid>
        <PasswordInput
          label="Import a key (optional)"
          description="32 bytes as 64 hex characters or base64; empty: a new random key is generated"
          autoComplete="off"
          value={form.key}
          disabled={form.publicKey.trim() !== ''}
          onChange={(event) => setForm({ ...form, key: event.currentTarget.value })}
        />
        <TextInput
          label="Or: a public key only (optional)"
          description="An age recipient (age1…, as age-keygen prints it). Holdfast then holds no key: it cannot read these backups, and restores and downloads ask for your private key each time. Keep the private key offline."
          autoComplete="off"
          value={form.publicKey}
          disabled={form.key.trim() !== ''}
          onChange={(event) => setForm({ ...form, publicKey: event.currentTarget.value })}
          data-field="vault-public-key"
        />
      </EditorPanel>
      {remove.error && <ErrorAlert error={remove.error} title="Could not delete the profile" />}
      {kit.error && <ErrorAlert error={kit.error} title="Could not download the recovery kit" />}
      <QueryState isPending={profiles.isPending} error={profiles.error} isEmpty={profiles.data?.length === 0} empty="No encryption profiles yet.">
        <RecordTable
          records={profiles.data}
          headers={['Name', 'Key fingerprint', 'Created']}
          minWidth={680}
          rowTestId="vault-row"
          cells={(profile) => (
            <>
              <Table.Td>
                {profile.name}
                {profile.description && <div>{profile.description}</div>}
                {profile.kind === 'public-key' && (
                  <div>
                    Public key only: <Code>{profile.publicKey}</Code>
                  </div>
                )}
              </Table.Td>
              <Table.Td>
                <Code>{profile.keyFingerprint}</Code>
              </Table.Td>
              <Table.Td>{formatDate(profile.createdAt)}</Table.Td>
            </>
          )}
          actions={(profile) => (
            <>
              {/* A public-key profile has no key to put in a kit: its backups are decrypted with age and the private key. */}
              {profile.kind !== 'public-key' && (
                <Button size="xs" variant="default" aria-label={`Download the recovery kit of ${profile.name}`} loading={kit.isPending && kit.variables?.id === profile.id} onClick={() => kit.mutate(profile)}>
                  Recovery kit
                </Button>
              )}
              <DeleteButton name={profile.name} question={`Delete ${profile.name}? Backups encrypted with it need its recovery kit.`} onDelete={() => remove.mutate(profile.id)} />
            </>
          )}
        />
      </QueryState>
    </Stack>
  );
}
