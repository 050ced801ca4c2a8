import { Alert, Button, Group, Modal, PasswordInput, Select, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ArchiveBrowser } from '../archive-browser/ArchiveBrowser';
import { isSeekableBackup } from '../archive-browser/archive-listing';
import { api, errorMessage, unwrap } from '../api/client';
import { withStepUp } from '../security/StepUp';
import { formatBytes, formatDate } from '../components/format';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { VerifyAction } from './VerifyAction';
import { useSafeRestoreTarget } from '../restore/SafeRestoreTarget';

type StoredFile = Awaited<ReturnType<typeof listFiles>>[number];

function listFiles(id: string) {
  return unwrap(api.GET('/api/storage/{id}/files', { params: { path: { id } } }));
}

/** Asks the server for a single-use link (typed client), then lets the browser's download manager fetch it. */
async function downloadThroughLink(storageId: string, file: string, privateKey?: string) {
  const answer = await unwrap(api.POST('/api/storage/{id}/download-url', { params: { path: { id: storageId } }, body: { file, decrypt: true, ...(privateKey ? { privateKey } : {}) } }));
  const anchor = document.createElement('a');
  anchor.href = answer.url;
  anchor.download = file.split('/').pop() ?? 'backup';
  anchor.rel = 'noopener';
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  notifications.show({ color: 'blue', message: `Download started (single-use link, valid ${answer.expiresIn})` });
}

/** The private key field of a backup of a public-key (age) profile: sent with this one request, never stored. */
function PrivateKeyInput({ value, onChange }: { value: string; onChange(value: string): void }) {
  return (
    <PasswordInput
      label="Private key (backups of a public-key profile only)"
      description="AGE-SECRET-KEY-1… from your age key file. Sent with this request only; Holdfast never stores it."
      autoComplete="off"
      value={value}
      onChange={(event) => onChange(event.currentTarget.value)}
      data-field="private-key"
    />
  );
}

/** Asks for the private key of a public-key backup the server cannot decrypt alone, then starts the download. */
function DownloadKeyModal({ storageId, file, onClose }: { storageId: string; file: StoredFile; onClose(): void }) {
  const [privateKey, setPrivateKey] = useState('');
  const download = useMutation({ mutationFn: () => downloadThroughLink(storageId, file.path, privateKey.trim()), onSuccess: onClose });
  return (
    <Modal opened onClose={onClose} title={`Download ${file.path}`} size="lg">
      <Stack>
        <Text size="sm">This backup is encrypted with a public-key profile: Holdfast cannot decrypt it without your private key.</Text>
        <PrivateKeyInput value={privateKey} onChange={setPrivateKey} />
        {download.error && <ErrorAlert error={download.error} title="Download refused" />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => download.mutate()} disabled={privateKey.trim() === ''} loading={download.isPending} data-testid="download-with-key">
            Download
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function RestoreModal({ storageId, file, onClose }: { storageId: string; file: StoredFile; onClose(): void }) {
  const navigate = useNavigate();
  const target = useSafeRestoreTarget(file.databases);
  const [privateKey, setPrivateKey] = useState('');
  const restore = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      unwrap(api.POST('/api/storage/{id}/restore', { params: { path: { id: storageId } }, body: { file: file.path, ...body, ...(privateKey.trim() ? { privateKey: privateKey.trim() } : {}) } })),
    onSuccess: (answer) => navigate(`/runs/${answer.executionId}`),
    onError: (error) => {
      if (/is not empty/.test(errorMessage(error))) target.refusedNonEmpty(errorMessage(error));
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Restore ${file.path}`} size="lg">
      <Stack>
        <Text size="sm">Backed up databases: {file.databases.length ? file.databases.join(', ') : '—'}</Text>
        {target.fields}
        {file.encrypted && <PrivateKeyInput value={privateKey} onChange={setPrivateKey} />}
        {restore.error && <ErrorAlert error={restore.error} title="Restore refused" />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => target.body && restore.mutate(target.body)} disabled={!target.body} loading={restore.isPending} data-testid="restore-start">
            Start restore
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Files of one destination: lock/unlock, delete, single-use download, restore, verification and browsing seekable archives. */
export default function StoragePage() {
  const auth = useAuth();
  // Destinations the caller may browse (storage:read), not their configurations (destinations:read): issue 47.
  const storages = useQuery({ queryKey: ['storage', 'destinations'], queryFn: () => unwrap(api.GET('/api/storage')) });
  const [params, setParams] = useSearchParams();
  const storageId = params.get('storage') ?? storages.data?.[0]?.id ?? null;
  const queryClient = useQueryClient();
  const files = useQuery({ queryKey: ['storage-files', storageId], queryFn: () => listFiles(storageId!), enabled: Boolean(storageId) });
  const [restoring, setRestoring] = useState<StoredFile | null>(null);
  const [browsing, setBrowsing] = useState<StoredFile | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['storage-files', storageId] });
  const lock = useMutation({
    mutationFn: (file: StoredFile) => withStepUp(() => unwrap(api.POST('/api/storage/{id}/lock', { params: { path: { id: storageId! } }, body: { file: file.path, locked: !file.locked } }))),
    onSuccess: refresh,
    onError: (error) => notifications.show({ color: 'red', title: 'Could not change the lock', message: errorMessage(error) }),
  });
  const remove = useMutation({
    mutationFn: (file: StoredFile) => withStepUp(() => unwrap(api.DELETE('/api/storage/{id}/files', { params: { path: { id: storageId! }, query: { file: file.path } }, body: { file: file.path } }))),
    onSuccess: refresh,
    onError: (error) => notifications.show({ color: 'red', title: 'Could not delete', message: errorMessage(error) }),
  });
  const may = (permission: string) => Boolean(storageId) && auth.canOn(permission, 'destination', storageId!);
  const [downloadingWithKey, setDownloadingWithKey] = useState<StoredFile | null>(null);
  const download = useMutation({
    mutationFn: (file: StoredFile) => downloadThroughLink(storageId!, file.path),
    onError: (error, file) => {
      // A public-key (age) backup: the server answers 400 naming privateKey; ask for it rather than fail.
      if (/privateKey/.test(errorMessage(error))) return setDownloadingWithKey(file);
      notifications.show({ color: 'red', title: 'Download refused', message: errorMessage(error) });
    },
  });
  return (
    <Stack>
      <Title order={2}>Storage</Title>
      <QueryState isPending={storages.isPending} error={storages.error} isEmpty={storages.data?.length === 0} empty="No destinations yet.">
        <Select
          label="Destination"
          data={(storages.data ?? []).map((storage) => ({ value: storage.id, label: storage.name }))}
          value={storageId}
          onChange={(value) => value && setParams({ storage: value })}
          allowDeselect={false}
          maw={360}
          data-field="storage-select"
        />
        <QueryState isPending={files.isPending} error={files.error} isEmpty={files.data?.length === 0} empty="This destination holds no backups yet.">
          <Table.ScrollContainer minWidth={0}>
            <Table striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>File</Table.Th>
                  <Table.Th visibleFrom="md">Job</Table.Th>
                  <Table.Th>Size</Table.Th>
                  <Table.Th visibleFrom="sm">Created</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {files.data?.map((file) => (
                  <Table.Tr key={file.path} data-testid="storage-row">
                    <Table.Td>
                      <Text size="sm" style={{ wordBreak: 'break-all' }}>
                        {file.path}
                      </Text>
                      <Group gap={4}>
                        {file.locked && <ToneBadge color="gray">locked</ToneBadge>}
                        {file.encrypted && <ToneBadge color="gray">encrypted</ToneBadge>}
                      </Group>
                    </Table.Td>
                    <Table.Td visibleFrom="md">{file.jobName ?? '—'}</Table.Td>
                    <Table.Td>{formatBytes(file.size)}</Table.Td>
                    <Table.Td visibleFrom="sm">{formatDate(file.createdAt ?? file.modifiedAt)}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        {may('storage:download') && (
                          <Button size="xs" variant="default" onClick={() => download.mutate(file)} data-testid="download">
                            Download
                          </Button>
                        )}
                        {may('storage:restore') && (
                          <Button size="xs" variant="default" onClick={() => setRestoring(file)} data-testid="restore">
                            Restore
                          </Button>
                        )}
                        {isSeekableBackup(file.path) && (
                          <Button size="xs" variant="default" onClick={() => setBrowsing(file)} data-testid="browse">
                            Browse
                          </Button>
                        )}
                        {auth.can('history:read') && <VerifyAction key={`${storageId}:${file.path}`} storageId={storageId!} file={file.path} />}
                        {may('storage:delete') && (
                          <>
                            <Button size="xs" variant="default" onClick={() => lock.mutate(file)}>
                              {file.locked ? 'Unlock' : 'Lock'}
                            </Button>
                            <Button size="xs" color="red" variant="outline" disabled={file.locked} onClick={() => window.confirm(`Delete ${file.path}?`) && remove.mutate(file)}>
                              Delete
                            </Button>
                          </>
                        )}
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </QueryState>
        <Alert variant="outline" color="gray">
          Downloads use a single-use link that expires after five minutes.
        </Alert>
      </QueryState>
      {restoring && storageId && <RestoreModal storageId={storageId} file={restoring} onClose={() => setRestoring(null)} />}
      {downloadingWithKey && storageId && <DownloadKeyModal storageId={storageId} file={downloadingWithKey} onClose={() => setDownloadingWithKey(null)} />}
      {browsing && storageId && <ArchiveBrowser storageId={storageId} file={browsing.path} onClose={() => setBrowsing(null)} />}
    </Stack>
  );
}
